import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataError } from '@agentrl/core';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test/temp-dir.ts';
import { latestCheckpointDir } from './trainer.ts';

describe('latestCheckpointDir', () => {
  it('finds the folder latest.json points at, nothing in a run without checkpoints, and refuses a bad pointer', async () => {
    const runDir = tempDir('agentrl-latest-');
    expect(await latestCheckpointDir(runDir)).toBeUndefined();
    mkdirSync(join(runDir, 'checkpoints', 'iter-000003'), { recursive: true });
    writeFileSync(
      join(runDir, 'checkpoints', 'latest.json'),
      JSON.stringify({ checkpoint: 'iter-000003' }),
    );
    expect(await latestCheckpointDir(runDir)).toBe(join(runDir, 'checkpoints', 'iter-000003'));
    writeFileSync(join(runDir, 'checkpoints', 'latest.json'), JSON.stringify({ step: 3 }));
    await expect(latestCheckpointDir(runDir)).rejects.toThrow(DataError);
    await expect(latestCheckpointDir(runDir)).rejects.toThrow(/not a checkpoint pointer/);
  });
});
