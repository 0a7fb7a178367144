/**
 * The summary as the README's tables (`results.md`): first the paper's Table 1 over this run's
 * final evaluation (rows the methods, columns the task types, the env's metrics and success; each
 * success cell pooled over seeds with its Wilson interval; the paper's own numbers beside ours),
 * each method's paired difference against GRPO, each arm's exact algorithm, the jobs' wall and CPU
 * time; then held-out success after the warm start and after RL, its curve (mean ± sd), the
 * per-seed wins, what RL adds in each arm, the step-group sizes, the final evaluation per seed;
 * and, for each of the benchmark's metrics (the WebShop score), its curve and its final values
 * per seed.
 */
import { ARMS } from './config.ts';
import type { MeanInterval } from './stats.ts';
import { meanStd } from './stats.ts';
import type {
  BenchSummary,
  CurvePoint,
  FinalMetric,
  PooledSuccess,
  ResultsTable,
  SummarySpec,
} from './summarize.ts';

const pct = (x: number) => `${(x * 100).toFixed(1)}`;
/** A metric already in points (the WebShop score is the mean task score × 100). */
const pts = (x: number) => x.toFixed(1);
const signed = (s: string) => (s.startsWith('-') ? s : `+${s}`);

type Stat = { mean: number; std: number; n: number } | undefined;

/** `mean ± sd (n=…)` of a curve point, formatted by `f`. */
const cellOf = (f: (x: number) => string) => (c: Stat) =>
  c && c.n > 0 ? `${f(c.mean)} ± ${f(c.std)} (n=${c.n})` : '–';

/** The iteration table of a curve per arm (success in %, or a metric in its own points). */
function curveTable(
  arms: readonly { arm: string; curve: readonly CurvePoint[] }[],
  what: string,
  f: (x: number) => string,
): string[] {
  const cell = cellOf(f);
  const iterations = [...new Set(arms.flatMap((a) => a.curve.map((c) => c.iteration)))].sort(
    (a, b) => a - b,
  );
  return [
    `| iteration | ${arms.map((a) => `${a.arm} ${what} (mean ± std)`).join(' | ')} |`,
    `| --- | ${arms.map(() => '---').join(' | ')} |`,
    ...iterations.map(
      (iteration) =>
        `| ${iteration} | ${arms
          .map((a) => cell(a.curve.find((c) => c.iteration === iteration)))
          .join(' | ')} |`,
    ),
  ];
}

/** `mean [low, high]` of an interval, formatted by `f`. */
const intervalOf = (d: MeanInterval, f: (x: number) => string, sign = false) =>
  Number.isNaN(d.mean)
    ? '–'
    : `${sign ? signed(f(d.mean)) : f(d.mean)} [${f(d.low)}, ${f(d.high)}]`;

/** The paper's Table 1 over this run, the paired table against the baseline, the paper's numbers. */
function tableLines(
  s: BenchSummary,
  spec: Pick<SummarySpec, 'paper' | 'paperTable'>,
  noun: string,
): string[] {
  const t: ResultsTable = s.table;
  const paper = spec.paper;
  const paperColumns = t.columns.filter((c) =>
    Object.values(paper?.rows ?? {}).some((row) => row[c.key] !== undefined),
  );
  const seedsWith = Math.max(0, ...t.rows.map((r) => r.seeds));
  const cell = (kind: string, c: PooledSuccess | MeanInterval | undefined) => {
    if (c === undefined) return '–';
    if (kind === 'metric') return intervalOf(c as MeanInterval, pts);
    const w = c as PooledSuccess;
    return `${pct(w.rate)} (${pct(w.low)}–${pct(w.high)})`;
  };
  const lines = [
    `Final evaluation on ${s.finalEval.episodes} held-out ${noun} per seed, laid out as the paper's ${spec.paperTable ?? 'Table 1'}: success in % of every seed's ${noun} pooled (${seedsWith} seeds), with its 95 % Wilson interval${
      t.columns.some((c) => c.kind === 'metric')
        ? `; ${t.columns
            .filter((c) => c.kind === 'metric')
            .map((c) => c.label)
            .join(', ')} the mean over seeds with its 95 % t-interval`
        : ''
    }${paper ? `; the paper's numbers beside ours (${paper.source})` : ''}:`,
    '',
    `| method | arm | ${t.columns.map((c) => c.label).join(' | ')}${paperColumns.map((c) => ` | paper: ${c.label}`).join('')} |`,
    `| --- | --- | ${t.columns.map(() => '---').join(' | ')}${paperColumns.map(() => ' | ---').join('')} |`,
    ...t.rows.map((r) => {
      const cells = t.columns.map((c) => cell(c.kind, r.cells[c.key]));
      const theirs = paperColumns.map((c) => {
        const x = paper?.rows[r.arm]?.[c.key];
        return x === undefined ? '–' : x.toFixed(1);
      });
      return `| ${r.label} | ${r.arm === 'warm' ? '–' : `\`${r.arm}\``} | ${cells.join(' | ')}${theirs.map((x) => ` | ${x}`).join('')} |`;
    }),
  ];
  const vs = t.vsBaseline;
  if (vs === undefined)
    return [...lines, '', 'No `grpo` arm in this run: no paired differences against GRPO.'];
  const baselineLabel = ARMS[vs.baseline]?.label ?? vs.baseline;
  lines.push(
    '',
    `Each method minus ${baselineLabel}, paired by seed (the same warm start and held-out ${noun}), in points: mean over seeds [95 % t-interval]:`,
    '',
    `| method − ${baselineLabel} | ${t.columns.map((c) => c.label).join(' | ')} |`,
    `| --- | ${t.columns.map(() => '---').join(' | ')} |`,
    ...vs.rows.map(
      (r) =>
        `| ${r.label} | ${t.columns
          .map((c) => {
            const d = r.cells[c.key];
            return d === undefined ? '–' : intervalOf(d, c.kind === 'metric' ? pts : pct, true);
          })
          .join(' | ')} |`,
    ),
  );
  const noise = s.finalEval.evalNoise;
  if (noise !== undefined)
    lines.push(
      '',
      `How much of the spread over seeds the evaluation makes (from each seed's per-game outcomes: the sd of its game-by-game differences / √${s.finalEval.episodes}, root mean square over seeds), against the sd of the per-seed differences in ${t.columns.at(-1)?.label ?? 'success'}, in points: ${noise
        .map((n) => {
          const training = Math.sqrt(Math.max(0, n.observedSd ** 2 - n.evalSd ** 2));
          const over =
            n.seedsWithOutcomes === n.seeds
              ? `${n.seeds} seeds`
              : `${n.seeds} seeds, the evaluation's from the ${n.seedsWithOutcomes} that kept per-game outcomes`;
          return `${ARMS[n.arm]?.label ?? n.arm} ${pct(n.evalSd)} of ${pct(n.observedSd)} (the rest, training, ${pct(training)}; ${over})`;
        })
        .join('; ')}.`,
    );
  return lines;
}

/** Each arm's algorithm as it trained, and the jobs' wall and CPU seconds. */
function armAndTimeLines(s: BenchSummary): string[] {
  const secs = (x: { mean: number; std: number; n: number }) =>
    x.n === 0 ? '–' : `${x.mean.toFixed(0)} ± ${x.std.toFixed(0)}`;
  return [
    '',
    'Arms (the algorithm entry each trained with, as a run config writes it):',
    '',
    ...s.arms.map((a) => `- \`${a.arm}\` (${a.label}): \`${JSON.stringify(a.algorithm ?? null)}\``),
    '',
    'Time per job (each job a process, two at a time; wall and CPU seconds of the process, mean ± sd over seeds):',
    '',
    '| job | jobs | wall s | CPU s | CPU s, all jobs |',
    '| --- | --- | --- | --- | --- |',
    ...s.times.map(
      (t) =>
        `| ${t.label}${t.phase === 'warm' || t.phase === 'eval' ? '' : ` (\`${t.phase}\`)`} | ${t.jobs} | ${secs(t.wallSeconds)} | ${secs(t.cpuSeconds)} | ${t.cpuSeconds.n === 0 ? '–' : t.cpuTotal.toFixed(0)} |`,
    ),
  ];
}

/** The final evaluation of one metric per seed: each model and RL's gains. */
function finalMetricLines(
  m: FinalMetric,
  arms: readonly string[],
  episodes: number,
  noun: string,
): string[] {
  const value = (x: number | undefined) => (x === undefined ? '–' : pts(x));
  const diff = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? '–' : pts(a - b);
  return [
    '',
    `${m.label} in the final evaluation on ${episodes} held-out ${noun} per seed (the same episodes as the table above):`,
    '',
    `| seed | warm start | ${arms.join(' | ')} | ${arms.map((a) => `${a} − warm start`).join(' | ')} |`,
    `| --- | --- | ${arms.map(() => '---').join(' | ')} | ${arms.map(() => '---').join(' | ')} |`,
    ...m.perSeed.map(
      ({ seed, values: v }) =>
        `| ${seed} | ${value(v.warm)} | ${arms.map((a) => value(v[a])).join(' | ')} | ${arms.map((a) => diff(v[a], v.warm)).join(' | ')} |`,
    ),
    '',
    `${m.label} on these ${noun}, RL gain over the warm start: ${m.rlGain.map((g) => `${g.arm} ${intervalOf(g, pts)}`).join(', ')}.`,
  ];
}

/** The README's tables of a summary. */
export function summaryMarkdown(
  s: BenchSummary,
  spec: Pick<SummarySpec, 'metrics' | 'heldOutNoun' | 'paper' | 'paperTable'>,
): string {
  const { arms, rlGain, finalEval } = s;
  const armNames = s.armNames;
  const noun = spec.heldOutNoun ?? 'games';
  const first = (arm: (typeof arms)[number]) => arm.validationCurve[0];
  const last = (arm: (typeof arms)[number]) => arm.validationCurve.at(-1);
  const cell = cellOf(pct);
  const seedsOf = (c: { perSeed: number[] } | undefined) =>
    c ? c.perSeed.map(pct).join(' / ') : '–';
  const lines = [
    ...tableLines(s, spec, noun),
    ...armAndTimeLines(s),
    '',
    `Held-out success on the validation's ${noun} (mean ± sd over seeds):`,
    '',
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
  for (const m of spec.metrics ?? [])
    lines.push(
      '',
      ...curveTable(
        arms.map((a) => ({ arm: a.arm, curve: a.metricCurves?.[m.name] ?? [] })),
        `held-out ${m.label}`,
        pts,
      ),
    );
  const vsBaseline = s.validationVsBaseline;
  lines.push(
    '',
    `| seed | ${arms.map((a) => `${a.arm} held-out wins per validation`).join(' | ')} |`,
    `| --- | ${arms.map(() => '---').join(' | ')} |`,
    ...s.seeds.map((seed) => {
      const curves = arms.map((a) => {
        const r = a.perSeed.find((p) => p.seed === seed);
        return r ? r.validation.map((v) => v.wins).join(', ') : '–';
      });
      return `| ${seed} | ${curves.join(' | ')} |`;
    }),
  );
  if (vsBaseline.length > 0)
    lines.push(
      '',
      `Paired difference of final validation success against ${vsBaseline[0]?.baseline}: ${vsBaseline
        .map(
          (d) =>
            `${d.arm} ${signed(pct(d.mean))} points [${pct(d.low)}, ${pct(d.high)}] over ${d.n} seeds`,
        )
        .join('; ')}.`,
    );
  lines.push(
    '',
    '| arm | held-out wins after the warm start, all seeds pooled (95 % Wilson) | after RL, pooled | RL gain per seed (points) | mean gain, 95 % t-interval over seeds |',
    '| --- | --- | --- | --- | --- |',
    ...rlGain.map(
      (g) =>
        `| ${g.arm} | ${g.pooledWarm.wins} / ${g.pooledWarm.n} = ${pct(g.pooledWarm.rate)} % (${pct(g.pooledWarm.low)}–${pct(g.pooledWarm.high)}) | ${g.pooledFinal.wins} / ${g.pooledFinal.n} = ${pct(g.pooledFinal.rate)} % (${pct(g.pooledFinal.low)}–${pct(g.pooledFinal.high)}) | ${g.paired.perSeed.map((p) => pct(p.diff)).join(', ')} | ${pct(g.paired.mean)} [${pct(g.paired.low)}, ${pct(g.paired.high)}] |`,
    ),
  );
  const meanOf = (values: number[]) => meanStd(values.filter((x) => Number.isFinite(x))).mean;
  for (const a of arms) {
    const sizes = a.perSeed.map((p) => p.meanStepGroupSize).filter((x) => Number.isFinite(x));
    const oneAction = a.perSeed
      .map((p) => p.meanOneActionStepGroupFraction)
      .filter((x) => Number.isFinite(x));
    if (sizes.length > 0)
      lines.push(
        '',
        `${a.arm}${a.algorithm?.name === 'gigpo' ? '' : ` (anchor groups counted in its batches; ${a.label} does not use them)`}: mean step-group size ${meanStd(sizes).mean.toFixed(2)} steps per anchor state, ${pct(meanOf(a.perSeed.map((p) => p.meanSingletonStepGroupFraction)))} % of step groups singletons${oneAction.length > 0 ? `, ${pct(meanOf(oneAction))} % of the others one action taken by every member` : ''}; ${pct(meanOf(a.perSeed.map((p) => p.meanZeroAdvantageFraction)))} % of rows at zero advantage (averaged over iterations and seeds).`,
      );
  }
  if (finalEval.perSeed.length > 0) {
    const ci = (c: { wins: number; n: number; low: number; high: number }) =>
      `${c.wins} / ${c.n} (${pct(c.low)}–${pct(c.high)} %)`;
    lines.push(
      '',
      `Final evaluation on ${finalEval.episodes} held-out ${noun} per seed (the validation's ${noun} and more; 95 % Wilson intervals; ✓: the arm's interval lies above the warm start's):`,
      '',
      `| seed | warm start | ${armNames.join(' | ')} |`,
      `| --- | --- | ${armNames.map(() => '---').join(' | ')} |`,
      ...finalEval.perSeed.map((p) => {
        const cells = armNames.map((arm) => {
          const a = p.arms[arm];
          return a === undefined ? '–' : `${ci(a)}${a.separatesFromWarm ? ' ✓' : ''}`;
        });
        return `| ${p.seed} | ${ci(p.warm)} | ${cells.join(' | ')} |`;
      }),
      '',
      `On these ${noun}, RL gain over the warm start: ${finalEval.rlGain.map((g) => `${g.arm} ${intervalOf(g, pct, true)}`).join(', ')} points.`,
    );
    for (const m of Object.values(finalEval.metrics ?? {}))
      lines.push(...finalMetricLines(m, armNames, finalEval.episodes, noun));
  }
  // Fewer than two seeds give no t-interval (NaN): say so instead of printing NaN.
  return lines
    .join('\n')
    .replaceAll(/\[(?:NaN|-?NaN), (?:NaN|-?NaN)\]/g, '(one seed: no interval)');
}
