/**
 * `agentrl train --preset alfworld-cpu` runs every phase of a run at a smoke-sized budget: the
 * held-out evaluation before the warm start, the expert warm start, GiGPO, the headline table and
 * `headline.json`; a `warmStart.source: checkpoint` run starts from the checkpoint's weights; a
 * bad `warmStart` field is refused before any work, naming the field and the fix.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshRunDir, readMetrics, runCli } from '../test/cli.ts';
import { AFTER_CHECKPOINT_LABEL, AFTER_WARM_START_LABEL, BEFORE_LABEL } from './phases.ts';
import type { HeadlineRow } from './report.ts';

/** The `alfworld-cpu` preset at a smoke-sized budget: 2 iterations of 2 groups of 2, 3 held-out games. */
const SMOKE = [
  '--iterations',
  '2',
  '--set',
  'rollout.batchSize=4',
  '--set',
  'rollout.groupSize=2',
  '--set',
  'rollout.maxTurns=4',
  '--set',
  'validation.every=1',
  '--set',
  'validation.episodes=3',
  '--set',
  'sft.episodes=4',
  '--set',
  'sft.steps=3',
  '--set',
  'sft.batchSize=4',
  '--set',
  'model.options.architecture.vocabularyEpisodes=4',
  '--set',
  'model.options.architecture.hiddenSize=32',
  '--set',
  'model.options.architecture.layers=1',
];

const train = (runDir: string, ...rest: string[]) =>
  runCli(['train', '--preset', 'alfworld-cpu', '--run-dir', runDir, ...SMOKE, ...rest]);

const headlineOf = (runDir: string) =>
  JSON.parse(readFileSync(join(runDir, 'headline.json'), 'utf8')) as HeadlineRow[];

/** A metrics line without its timings. */
function untimed(metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(metrics).filter(([k]) => !k.startsWith('time/')));
}

describe('agentrl train with the phases of a CPU preset', () => {
  it('warm-starts from the expert, runs GiGPO, then prints the held-out table and writes headline.json with its three rows', {
    timeout: 120_000,
  }, async () => {
    const runDir = freshRunDir('agentrl-phases-');
    const r = await train(runDir);
    expect(r.code, r.err).toBe(0);
    // Each phase is named as it starts, with its counts.
    expect(r.err).toMatch(/phase 1\/4: held-out evaluation before the warm start \(3 episodes\)/);
    expect(r.err).toMatch(/phase 2\/4: warm start: 4 expert episodes, then up to 3 SFT steps of 4/);
    expect(r.err).toMatch(/expert: won \d\/4 episodes, \d+ demonstration steps/);
    expect(r.err).toMatch(/phase 3\/4: RL \(GiGPO, 2 iterations of 2 groups × 2\)/);

    const rows = headlineOf(runDir);
    expect(rows.map((row) => row.label)).toEqual([
      BEFORE_LABEL,
      AFTER_WARM_START_LABEL,
      'after GiGPO (2 iterations)',
    ]);
    expect(rows.map((row) => row.episodes)).toEqual([3, 3, 3]);
    // The second and third rows are the first and last validations (the same held-out games).
    const metrics = readMetrics(runDir);
    const validations = metrics.filter((m) => m['val/wins'] !== undefined);
    expect(validations.map((m) => m.iteration)).toEqual([0, 1, 2]);
    expect(rows[1]?.wins).toBe(validations[0]?.['val/wins']);
    expect(rows[2]?.wins).toBe(validations[2]?.['val/wins']);
    expect(JSON.parse(readFileSync(join(runDir, 'sft-loss.json'), 'utf8'))).toHaveLength(3);
    expect(existsSync(join(runDir, 'timings.json'))).toBe(true);

    // The table on stdout: each row with its wins, rate and interval, then the files.
    expect(r.out).toContain(
      'Held-out success (alfworld/text-v1, 3 episodes, 95% Wilson interval):',
    );
    for (const row of rows)
      expect(r.out).toMatch(
        new RegExp(`${row.label.replace(/[()]/g, '\\$&')}\\s+${row.wins}/3\\s+\\d+\\.\\d%\\s+\\[`),
      );
    expect(r.out).toContain(`headline: ${join(runDir, 'headline.json')}`);
    expect(readFileSync(join(runDir, 'report.html'), 'utf8')).toContain(AFTER_WARM_START_LABEL);
  });

  it('plays the headline evaluations itself when they are not the validations, and they measure the same games', {
    timeout: 120_000,
  }, async () => {
    const validated = freshRunDir('agentrl-phases-validated-');
    expect((await train(validated)).code).toBe(0);
    // No validations: the evaluations after the warm start and after RL are played on their own.
    const runDir = freshRunDir('agentrl-phases-own-');
    const r = await train(runDir, '--set', 'validation.every=0', '--set', 'finalEval.episodes=3');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/phase 4\/4: final held-out evaluation \(3 episodes\)/);
    expect(readMetrics(runDir).some((m) => m['val/wins'] !== undefined)).toBe(false);
    expect(headlineOf(runDir)).toEqual(headlineOf(validated));
  });

  it('starts RL from the weights of warmStart.checkpoint: a checkpoint of `agentrl sft` trains as the expert warm start it holds', {
    timeout: 120_000,
  }, async () => {
    const sftDir = freshRunDir('agentrl-phases-sft-');
    const sft = await runCli([
      'sft',
      '--preset',
      'alfworld-cpu',
      '--run-dir',
      sftDir,
      ...SMOKE.slice(2),
    ]);
    expect(sft.code, sft.err).toBe(0);
    const checkpoint = join(sftDir, 'sft', 'model');

    const runDir = freshRunDir('agentrl-phases-checkpoint-');
    const r = await train(
      runDir,
      '--set',
      'warmStart.source=checkpoint',
      '--set',
      `warmStart.checkpoint=${checkpoint}`,
    );
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`warm start from the checkpoint ${checkpoint}`);
    expect(r.err).not.toMatch(/expert: won/);
    expect(headlineOf(runDir).map((row) => row.label)).toEqual([
      BEFORE_LABEL,
      AFTER_CHECKPOINT_LABEL,
      'after GiGPO (2 iterations)',
    ]);

    // The same run warm-started from the expert (the same demonstrations and SFT steps as the
    // checkpoint's) trains on the same thing; from the fresh model (source none) it does not.
    const expertDir = freshRunDir('agentrl-phases-expert-');
    expect((await train(expertDir)).code).toBe(0);
    const noneDir = freshRunDir('agentrl-phases-none-');
    const none = await train(noneDir, '--set', 'warmStart.source=none');
    expect(none.code, none.err).toBe(0);
    // RL from a fresh model is named as the trap it is, with the fix.
    expect(none.err).toMatch(
      /warning: warmStart\.source is "none" and the model is a fresh one.*--set warmStart\.source=expert/,
    );
    expect(r.err).not.toMatch(/warning: warmStart/);
    const trained = (dir: string) => readMetrics(dir).map((m) => untimed(m));
    expect(trained(runDir)).toEqual(trained(expertDir));
    expect(trained(runDir)).not.toEqual(trained(noneDir));
  });

  it('resumes a run after its warm start: the warm start is not redone and the headline is the uninterrupted run’s', {
    timeout: 120_000,
  }, async () => {
    const runDir = freshRunDir('agentrl-phases-resume-');
    const first = await train(runDir, '--iterations', '1');
    expect(first.code, first.err).toBe(0);
    const resumed = await train(runDir, '--iterations', '2', '--resume');
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).not.toMatch(/warm start|expert: won/);
    expect(resumed.err).toMatch(/phase 3\/4: RL/);
    const straightDir = freshRunDir('agentrl-phases-straight-');
    expect((await train(straightDir)).code).toBe(0);
    expect(headlineOf(runDir)).toEqual(headlineOf(straightDir));
    expect(readMetrics(runDir).map(untimed)).toEqual(readMetrics(straightDir).map(untimed));
  });

  it('refuses a bad warmStart or finalEval field before any work, naming the field and the fix', async () => {
    const runDir = freshRunDir('agentrl-phases-bad-');
    const cases: [string[], RegExp][] = [
      [
        ['--set', 'warmStart.source=expret'],
        /warmStart\.source: not an allowed value; use one of "expert", "checkpoint", "none"/,
      ],
      [
        ['--set', 'warmStart.source=checkpoint'],
        /warmStart\.checkpoint is required when warmStart\.source is "checkpoint": give the folder of the weights, e\.g\. --set warmStart\.checkpoint=/,
      ],
      [
        ['--set', 'warmStart.source=checkpoint', '--set', `warmStart.checkpoint=${runDir}/none`],
        /warmStart\.checkpoint: folder ".*none" does not exist .*give a checkpoint folder/,
      ],
      [
        ['--set', `warmStart.checkpoint=${runDir}`],
        /warmStart\.checkpoint is set but warmStart\.source is "expert", which never reads it: set warmStart\.source=checkpoint/,
      ],
      [['--set', 'warmStart.chekpoint=x'], /warmStart.*chekpoint.*"checkpoint"/],
      [
        ['--set', 'finalEval.enabled=false', '--set', 'finalEval.episodes=8'],
        /finalEval\.episodes is set but finalEval\.enabled is false, so no final evaluation reads it: set finalEval\.enabled=true/,
      ],
    ];
    for (const [flags, message] of cases) {
      const r = await train(runDir, ...flags);
      expect(r.code, flags.join(' ')).not.toBe(0);
      expect(r.err).toMatch(message);
      expect(r.err).toContain('[BAD_CONFIG]');
    }
    expect(existsSync(runDir)).toBe(false);
  });
});
