/**
 * The summary as the README's tables (`results.md`): held-out success after the warm start and
 * after RL, its curve, the per-seed wins and the paired GiGPO − GRPO difference, what RL adds in
 * each arm, the step-group sizes, the final evaluation per seed; and, for each of the benchmark's
 * metrics (the WebShop score), its curve and its final evaluation per seed with the same
 * comparisons.
 */
import { ARMS } from './config.ts';
import { meanStd } from './stats.ts';
import type { BenchSummary, CurvePoint, FinalMetric, SummarySpec } from './summarize.ts';

const pct = (x: number) => `${(x * 100).toFixed(1)}`;
/** A metric already in points (the WebShop score is the mean task score × 100). */
const pts = (x: number) => x.toFixed(1);

type Stat = { mean: number; std: number; n: number } | undefined;

/** `mean ± sd (n=…)` of a curve point, formatted by `f`. */
const cellOf = (f: (x: number) => string) => (c: Stat) =>
  c ? `${f(c.mean)} ± ${f(c.std)} (n=${c.n})` : '–';

/** The iteration table of a curve per arm (success in %, or a metric in its own points). */
function curveTable(
  arms: readonly { arm: string; curve: readonly CurvePoint[] }[],
  what: string,
  f: (x: number) => string,
): string[] {
  const cell = cellOf(f);
  return [
    `| iteration | ${arms.map((a) => `${a.arm} ${what} (mean ± std)`).join(' | ')} |`,
    `| --- | ${arms.map(() => '---').join(' | ')} |`,
    ...(arms[0]?.curve ?? []).map(
      (row) =>
        `| ${row.iteration} | ${arms
          .map((a) => cell(a.curve.find((c) => c.iteration === row.iteration)))
          .join(' | ')} |`,
    ),
  ];
}

/** The final evaluation of one metric per seed: each model, the arms' difference, RL's gains. */
function finalMetricLines(m: FinalMetric, episodes: number, noun: string): string[] {
  const arms = Object.keys(ARMS);
  const [armA, armB] = arms as [string, string];
  const value = (x: number | undefined) => (x === undefined ? '–' : pts(x));
  const diff = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? '–' : pts(a - b);
  const interval = (d: { mean: number; low: number; high: number }) =>
    `${pts(d.mean)} [${pts(d.low)}, ${pts(d.high)}]`;
  return [
    '',
    `${m.label} in the final evaluation on ${episodes} held-out ${noun} per seed (the same episodes as the table above):`,
    '',
    `| seed | warm start | ${arms.join(' | ')} | ${armA} − ${armB} (points) | ${arms.map((a) => `${a} − warm start`).join(' | ')} |`,
    `| --- | --- | ${arms.map(() => '---').join(' | ')} | --- | ${arms.map(() => '---').join(' | ')} |`,
    ...m.perSeed.map(
      ({ seed, values: v }) =>
        `| ${seed} | ${value(v.warm)} | ${arms.map((a) => value(v[a])).join(' | ')} | ${diff(v[armA], v[armB])} | ${arms.map((a) => diff(v[a], v.warm)).join(' | ')} |`,
    ),
    '',
    `${m.label} on these ${noun}: ${armA} − ${armB} ${interval(m.paired)} points (95 % t-interval over ${m.paired.n} seeds); RL gain over the warm start ${m.rlGain.map((g) => `${g.arm} ${interval(g)}`).join(', ')}.`,
  ];
}

/** The README's tables of a summary. */
export function summaryMarkdown(
  s: BenchSummary,
  bench: Pick<SummarySpec, 'metrics' | 'heldOutNoun'>,
): string {
  const { arms, paired, rlGain, finalEval } = s;
  const noun = bench.heldOutNoun ?? 'games';
  const [armA, armB] = Object.keys(ARMS) as [string, string];
  const first = (arm: (typeof arms)[number]) => arm.validationCurve[0];
  const last = (arm: (typeof arms)[number]) => arm.validationCurve.at(-1);
  const cell = cellOf(pct);
  const seedsOf = (c: { perSeed: number[] } | undefined) =>
    c ? c.perSeed.map(pct).join(' / ') : '–';
  const lines = [
    '| arm | after warm start (iter 0) | after RL (final) | per seed, warm → final (%) |',
    '| --- | --- | --- | --- |',
    ...arms.map(
      (a) =>
        `| ${a.arm} | ${cell(first(a))} | ${cell(last(a))} | ${seedsOf(first(a))} → ${seedsOf(last(a))} |`,
    ),
    '',
    ...curveTable(
      arms.map((a) => ({ arm: a.arm, curve: a.validationCurve })),
      'held-out success %',
      pct,
    ),
  ];
  for (const m of bench.metrics ?? [])
    lines.push(
      '',
      ...curveTable(
        arms.map((a) => ({ arm: a.arm, curve: a.metricCurves?.[m.name] ?? [] })),
        `held-out ${m.label}`,
        pts,
      ),
    );
  lines.push(
    '',
    '| seed | ' +
      arms.map((a) => `${a.arm} held-out wins per validation`).join(' | ') +
      ` | final ${armA} − ${armB} (points) |`,
    '| --- | ' + arms.map(() => '---').join(' | ') + ' | --- |',
    ...s.seeds.map((seed) => {
      const curves = arms.map((a) => {
        const r = a.perSeed.find((p) => p.seed === seed);
        return r ? r.validation.map((v) => v.wins).join(', ') : '–';
      });
      const d = paired.perSeed.find((p) => p.seed === seed);
      return `| ${seed} | ${curves.join(' | ')} | ${d ? pct(d.diff) : '–'} |`;
    }),
    '',
    `Paired difference of final held-out success, ${armA} − ${armB}: ${pct(paired.mean)} points, 95 % t-interval [${pct(paired.low)}, ${pct(paired.high)}] over ${paired.n} seeds.`,
    '',
    '| arm | held-out wins after the warm start, all seeds pooled (95 % Wilson) | after RL, pooled | RL gain per seed (points) | mean gain, 95 % t-interval over seeds |',
    '| --- | --- | --- | --- | --- |',
    ...rlGain.map(
      (g) =>
        `| ${g.arm} | ${g.pooledWarm.wins} / ${g.pooledWarm.n} = ${pct(g.pooledWarm.rate)} % (${pct(g.pooledWarm.low)}–${pct(g.pooledWarm.high)}) | ${g.pooledFinal.wins} / ${g.pooledFinal.n} = ${pct(g.pooledFinal.rate)} % (${pct(g.pooledFinal.low)}–${pct(g.pooledFinal.high)}) | ${g.paired.perSeed.map((p) => pct(p.diff)).join(', ')} | ${pct(g.paired.mean)} [${pct(g.paired.low)}, ${pct(g.paired.high)}] |`,
    ),
  );
  for (const a of arms) {
    const sizes = a.perSeed.map((p) => p.meanStepGroupSize).filter((x) => Number.isFinite(x));
    if (sizes.length > 0)
      lines.push(
        '',
        `${a.arm}${ARMS[a.arm]?.name === 'gigpo' ? '' : ' (anchor groups counted in its batches; GRPO does not use them)'}: mean step-group size ${meanStd(sizes).mean.toFixed(2)} steps per anchor state, ${pct(meanStd(a.perSeed.map((p) => p.meanSingletonStepGroupFraction).filter((x) => Number.isFinite(x))).mean)} % of step groups singletons (averaged over iterations and seeds).`,
      );
  }
  if (finalEval.perSeed.length > 0) {
    const ci = (c: { wins: number; n: number; low: number; high: number }) =>
      `${c.wins} / ${c.n} (${pct(c.low)}–${pct(c.high)} %)`;
    lines.push(
      '',
      `Final evaluation on ${finalEval.episodes} held-out ${noun} per seed (the validation's ${noun} and more; 95 % Wilson intervals; ✓: the arm's interval lies above the warm start's):`,
      '',
      `| seed | warm start | ${Object.keys(ARMS).join(' | ')} | ${armA} − ${armB} (points) |`,
      `| --- | --- | ${Object.keys(ARMS)
        .map(() => '---')
        .join(' | ')} | --- |`,
      ...finalEval.perSeed.map((p) => {
        const cells = Object.keys(ARMS).map((arm) => {
          const a = p.arms[arm];
          return a === undefined ? '–' : `${ci(a)}${a.separatesFromWarm ? ' ✓' : ''}`;
        });
        const d = finalEval.paired.perSeed.find((x) => x.seed === p.seed);
        return `| ${p.seed} | ${ci(p.warm)} | ${cells.join(' | ')} | ${d ? pct(d.diff) : '–'} |`;
      }),
      '',
      `On these ${noun}: ${armA} − ${armB} ${pct(finalEval.paired.mean)} points, 95 % t-interval [${pct(finalEval.paired.low)}, ${pct(finalEval.paired.high)}] over ${finalEval.paired.n} seeds; RL gain over the warm start ${finalEval.rlGain.map((g) => `${g.arm} ${pct(g.mean)} [${pct(g.low)}, ${pct(g.high)}]`).join(', ')}.`,
    );
    for (const m of Object.values(finalEval.metrics ?? {}))
      lines.push(...finalMetricLines(m, finalEval.episodes, noun));
  }
  // Fewer than two seeds give no t-interval (NaN): say so instead of printing NaN.
  return lines.join('\n').replaceAll('[NaN, NaN]', '(one seed: no interval)');
}
