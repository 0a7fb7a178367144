import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test/temp-dir.ts';

const script = fileURLToPath(new URL('../test/fixtures/train-corridor.ts', import.meta.url));

function start(runDir: string, iterations: number, resume: boolean): ChildProcess {
  return spawn(
    process.execPath,
    [
      '--conditions=@agentrl/source',
      '--disable-warning=ExperimentalWarning',
      script,
      runDir,
      String(iterations),
      ...(resume ? ['--resume'] : []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

function finish(
  child: ChildProcess,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((res) => child.on('close', (code) => res({ code, stdout, stderr })));
}

function metrics(runDir: string): Record<string, number>[] {
  return readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>)
    .map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/'))));
}

describe('a training process killed with SIGKILL', () => {
  it('resumes to the same metrics as an uninterrupted run with the same seed', async () => {
    const iterations = 8;
    const full = tempDir('agentrl-kill-full-');
    const done = await finish(start(full, iterations, false));
    expect(done.code, done.stderr).toBe(0);

    const killed = tempDir('agentrl-kill-cut-');
    const child = start(killed, iterations, false);
    let seen = '';
    const ended = finish(child);
    await new Promise<void>((res) => {
      child.stdout?.on('data', (d: Buffer) => {
        seen += d.toString();
        if (/checkpoint 3\n/.test(seen)) {
          child.kill('SIGKILL');
          res();
        }
      });
    });
    const cut = await ended;
    expect(cut.code).toBeNull();
    expect(seen).not.toMatch(/done/);

    const resumed = await finish(start(killed, iterations, true));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(metrics(killed)).toEqual(metrics(full));
  });
});
