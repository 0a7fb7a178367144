import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { corridorConfig, runCli } from '../test/cli.ts';
import { tempDir } from '../test/temp-dir.ts';
import { listenError, notWritableError, reportLine } from './cli-errors.ts';

/** The message is one line with no stack trace. */
function expectOneLine(err: string): void {
  expect(err.trim().split('\n')).toHaveLength(1);
  expect(err).not.toMatch(/^\s+at /m);
}

describe('agentrl usage errors', () => {
  it('names --preset with the presets, and --config, when train is given no config', async () => {
    const r = await runCli(['train']);
    expect(r.code).toBe(2);
    expectOneLine(r.err);
    expect(r.err).toMatch(
      /\[USAGE\]: agentrl train needs a config: --preset <name> \(one of alfworld-paper, alfworld-cpu, .*webshop-cpu\) or --config <file>/,
    );
  });

  it('names the run folder and its checkpoints among the ways to give eval a config', async () => {
    const r = await runCli(['eval']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--checkpoint <run>\/checkpoints\/<name> or --run-dir <run folder>/);
    expect(r.err).toMatch(/--preset <name> .* or --config <file>/);
  });

  it('says which numbers a number flag takes when given a negative one, before any work', async () => {
    const dir = tempDir('agentrl-neg-');
    const config = corridorConfig(dir);
    const r = await runCli(['train', '-c', config, '--iterations', '-1']);
    expect(r.code).toBe(2);
    expectOneLine(r.err);
    expect(r.err).toMatch(
      /\[USAGE\]: --iterations -1: give a whole number of at least 1 \(it sets training\.iterations\)/,
    );
    expect(r.err).not.toMatch(/ambiguous/);
    const episodes = await runCli(['eval', '-c', config, '--episodes', '-2']);
    expect(episodes.err).toMatch(/--episodes -2: give a whole number of at least 1/);
    const word = await runCli(['train', '-c', config, '--iterations', 'ten']);
    expect(word.err).toMatch(/--iterations ten: give a whole number/);
    expect(existsSync(join(dir, 'run'))).toBe(false);
  });

  it('gives every usage mistake the same one-line shape with the USAGE code and exit 2', async () => {
    const missing = await runCli(['train', '--iterations']);
    expect(missing.code).toBe(2);
    expectOneLine(missing.err);
    expect(missing.err).toMatch(
      /^agentrl train failed \[USAGE\]: Option '--iterations <value>' argument missing \(`agentrl train --help` lists the options\)/,
    );
    const flag = await runCli(['train', '--iteratons', '3']);
    expect(flag.err).toMatch(/^agentrl train failed \[USAGE\]: unknown option "--iteratons"/);
    const report = await runCli(['report']);
    expect(report.code).toBe(2);
    expect(report.err).toMatch(/\[USAGE\]: give an existing run folder: agentrl report RUN_DIR/);
  });

  it('takes a negative seed, which the seed key allows', async () => {
    const dir = tempDir('agentrl-neg-');
    const r = await runCli(['train', '-c', corridorConfig(dir), '--seed', '-3']);
    expect(r.code, r.err).toBe(0);
  });
});

describe('agentrl system errors', () => {
  it.skipIf(!existsSync('/sys'))(
    'names a run folder that cannot be written and --run-dir, in one line',
    async () => {
      const dir = tempDir('agentrl-rofs-');
      const unwritable = '/sys/agentrl-cannot-write-here';
      const r = await runCli(['train', '-c', corridorConfig(dir), '--run-dir', unwritable]);
      expect(r.code).toBe(1);
      expectOneLine(r.err);
      expect(r.err).toMatch(
        /\[NOT_WRITABLE\]: cannot write the folder \/sys\/agentrl-cannot-write-here \(E[A-Z]+\): give a folder you can write with --run-dir DIR/,
      );
    },
  );

  it('turns a port in use into one line naming the port and --port', () => {
    const inUse = Object.assign(new Error('listen EADDRINUSE: address already in use'), {
      code: 'EADDRINUSE',
      port: 8000,
      address: '127.0.0.1',
    });
    const { line, exitCode } = reportLine('serve', listenError(inUse, 8000, '127.0.0.1'));
    expect(exitCode).toBe(1);
    expect(line).toBe(
      'agentrl serve failed [PORT_IN_USE]: port 8000 on 127.0.0.1 is already in use by another program: stop that program, or pick another port with --port N (--port 0 picks a free one)\n',
    );
    // A raw one that reaches the command's error line is turned into the same.
    expect(reportLine('serve', inUse).line).toMatch(/\[PORT_IN_USE\]: port 8000 on 127\.0\.0\.1/);
  });

  it('turns a permission error on a file into a line naming its folder', () => {
    const denied = Object.assign(new Error("EACCES: permission denied, mkdir '/srv/x'"), {
      code: 'EACCES',
      path: '/srv/x',
    });
    expect(reportLine('eval', denied).line).toBe(
      'agentrl eval failed [NOT_WRITABLE]: cannot write the folder /srv/x (EACCES): give a folder you can write with --run-dir DIR, or fix its permissions\n',
    );
    expect((notWritableError(denied, '/srv', '--dir') as Error).message).toMatch(
      /cannot write the folder \/srv \(EACCES on \/srv\/x\): give a folder you can write with --dir DIR/,
    );
  });
});
