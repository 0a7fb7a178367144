/**
 * The overlay report of several run folders (`agentrl report RUN_DIR RUN_DIR…`): one
 * self-contained HTML file whose charts draw every run's curve and, for runs labelled as arms
 * (the same algorithm, say, on several seeds), each arm's mean with a ±1 sd band, plus tables of
 * held-out success per run and per arm. A run's arm is the one given by the caller, else the
 * `arm` field of its `config.resolved.json`, else the algorithm named in its resolved config.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { InvalidInputError } from '@agentrl/core';
import { writeFileAtomic } from './files.ts';
import {
  type ChartSeries,
  chartKeys,
  escapeHtml,
  fmt,
  HOVER_SCRIPT,
  readJsonl,
  renderChart,
  reportPageStart,
  seriesOf,
} from './report.ts';
import { wilsonInterval } from './stats.ts';

/** The overlay's own styles: the legend keys and the arm dots. */
const LEGEND_STYLE =
  '.key{display:inline-block;margin:0 16px 6px 0}.key i,.dot{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;vertical-align:-1px}';

/** One run of an overlay: its folder, and optionally its label and arm. */
export interface OverlayRun {
  readonly dir: string;
  /** Name in legends and tables. Default: the folder's path below the runs' common folder. */
  readonly label?: string;
  /** Arm of the run. Default: `arm`, else `config.algorithm.name`, of its config.resolved.json. */
  readonly arm?: string;
}

/** Colours of arms (and of runs without an arm), in order. */
const PALETTE = [
  '#2563eb',
  '#dc2626',
  '#16a34a',
  '#9333ea',
  '#ea580c',
  '#0891b2',
  '#ca8a04',
  '#db2777',
] as const;

/** The arm recorded in a run folder's `config.resolved.json`, if any. */
export function recordedArm(dir: string): string | undefined {
  const path = join(dir, 'config.resolved.json');
  if (!existsSync(path)) return undefined;
  let info: unknown;
  try {
    info = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  const record = info as { arm?: unknown; config?: { algorithm?: { name?: unknown } } };
  if (typeof record.arm === 'string' && record.arm.length > 0) return record.arm;
  const name = record.config?.algorithm?.name;
  return typeof name === 'string' && name.length > 0 ? name : undefined;
}

/** Labels that tell the runs apart: each folder's path below their deepest common folder. */
function defaultLabels(dirs: readonly string[]): string[] {
  const abs = dirs.map((d) => resolve(d));
  if (abs.length === 1) return [basename(abs[0] as string)];
  let common = dirname(abs[0] as string);
  while (!abs.every((d) => d.startsWith(common + sep)) && dirname(common) !== common)
    common = dirname(common);
  return abs.map((d) => relative(common, d).split(sep).join('/') || basename(d));
}

/** Mean and sample sd (0 for one value) of a list. */
function meanSd(values: readonly number[]): { mean: number; sd: number } {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  if (values.length < 2) return { mean, sd: 0 };
  const v = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1);
  return { mean, sd: Math.sqrt(v) };
}

/** Per iteration: the mean over the runs that have a value there, and mean ± sd where two do. */
function armSeries(curves: readonly (readonly [number, number][])[]): {
  points: [number, number][];
  band: [number, number, number][];
} {
  const at = new Map<number, number[]>();
  for (const c of curves)
    for (const [x, y] of c) {
      const list = at.get(x) ?? [];
      list.push(y);
      at.set(x, list);
    }
  const xs = [...at.keys()].sort((a, b) => a - b);
  const points: [number, number][] = [];
  const band: [number, number, number][] = [];
  for (const x of xs) {
    const values = at.get(x) as number[];
    const { mean, sd } = meanSd(values);
    points.push([x, mean]);
    if (values.length >= 2) band.push([x, mean - sd, mean + sd]);
  }
  return { points, band };
}

interface LoadedRun {
  readonly dir: string;
  readonly label: string;
  readonly arm: string | undefined;
  readonly metrics: Record<string, number>[];
  readonly color: string;
}

/** Held-out success of the first and the last validation record of a run. */
function validationEnds(metrics: readonly Record<string, number>[]): {
  first?: Record<string, number>;
  last?: Record<string, number>;
} {
  const val = metrics.filter((m) => typeof m['val/success'] === 'number');
  return {
    ...(val[0] !== undefined ? { first: val[0] } : {}),
    ...(val.at(-1) !== undefined ? { last: val.at(-1) } : {}),
  };
}

function successCell(m: Record<string, number> | undefined): string {
  if (m === undefined) return '<td>–</td>';
  const wins = m['val/wins'];
  const episodes = m['val/episodes'];
  if (typeof wins === 'number' && typeof episodes === 'number' && episodes > 0) {
    const ci = wilsonInterval(wins, episodes);
    return `<td>${wins} / ${episodes} (${(ci.rate * 100).toFixed(1)}%, ${(ci.low * 100).toFixed(1)}–${(ci.high * 100).toFixed(1)}%)</td>`;
  }
  return `<td>${fmt((m['val/success'] as number) * 100)}%</td>`;
}

/** Renders the overlay report of `runs` (see the module comment). */
export function renderOverlayReport(
  runs: readonly OverlayRun[],
  options: { title?: string } = {},
): string {
  if (runs.length === 0) {
    throw new InvalidInputError('an overlay report needs at least one run folder; none was given', {
      details: { field: 'runs' },
    });
  }
  const labels = defaultLabels(runs.map((r) => r.dir));
  const armNames: string[] = [];
  const partial = runs.map((r, i) => {
    const arm = r.arm ?? recordedArm(r.dir);
    if (arm !== undefined && !armNames.includes(arm)) armNames.push(arm);
    return {
      dir: r.dir,
      label: r.label ?? (labels[i] as string),
      arm,
      metrics: readJsonl(join(r.dir, 'metrics.jsonl')),
    };
  });
  let nextColor = armNames.length;
  const colorOf = (i: number) => PALETTE[i % PALETTE.length] as string;
  const loaded: LoadedRun[] = partial.map((r) => ({
    ...r,
    color: r.arm !== undefined ? colorOf(armNames.indexOf(r.arm)) : colorOf(nextColor++),
  }));

  const charts = chartKeys(loaded.map((r) => r.metrics))
    .map((key) => {
      const series: ChartSeries[] = [];
      for (const r of loaded) {
        const points = seriesOf(r.metrics, key);
        if (points.length === 0) continue;
        series.push({
          label: r.label,
          points,
          color: r.color,
          kind: 'run',
          ...(r.arm !== undefined ? { arm: r.arm, faint: true } : {}),
        });
      }
      for (const arm of armNames) {
        const curves = loaded
          .filter((r) => r.arm === arm)
          .map((r) => seriesOf(r.metrics, key))
          .filter((c) => c.length > 0);
        if (curves.length === 0) continue;
        const { points, band } = armSeries(curves);
        series.push({
          label: `${arm} mean (${curves.length} run${curves.length === 1 ? '' : 's'})`,
          points,
          band,
          color: colorOf(armNames.indexOf(arm)),
          kind: 'mean',
          arm,
        });
      }
      return series.length > 0 ? renderChart(key, series) : '';
    })
    .join('\n');

  const legend = [
    ...armNames.map((arm) => {
      const n = loaded.filter((r) => r.arm === arm).length;
      return `<span class="key" data-arm="${escapeHtml(arm)}"><i style="background:${colorOf(armNames.indexOf(arm))}"></i>${escapeHtml(arm)}: ${n} run${n === 1 ? '' : 's'} (thin), mean ± sd (thick, shaded)</span>`;
    }),
    ...loaded
      .filter((r) => r.arm === undefined)
      .map(
        (r) =>
          `<span class="key"><i style="background:${r.color}"></i>${escapeHtml(r.label)}</span>`,
      ),
  ].join('');

  const runRows = loaded
    .map((r) => {
      const { first, last } = validationEnds(r.metrics);
      return `<tr><td><i class="dot" style="background:${r.color}"></i>${escapeHtml(r.label)}</td><td>${escapeHtml(r.arm ?? '–')}</td>${successCell(first)}${successCell(last)}<td>${r.metrics.filter((m) => m.final !== 1).length}</td></tr>`;
    })
    .join('');
  const armRows = armNames
    .map((arm) => {
      const of = loaded.filter((r) => r.arm === arm).map((r) => validationEnds(r.metrics));
      const cell = (pick: 'first' | 'last') => {
        const values = of
          .map((e) => e[pick]?.['val/success'])
          .filter((v): v is number => typeof v === 'number');
        if (values.length === 0) return '<td>–</td>';
        const { mean, sd } = meanSd(values);
        return `<td>${(mean * 100).toFixed(1)}% ± ${(sd * 100).toFixed(1)}% (n ${values.length})</td>`;
      };
      return `<tr><td><i class="dot" style="background:${colorOf(armNames.indexOf(arm))}"></i>${escapeHtml(arm)}</td>${cell('first')}${cell('last')}</tr>`;
    })
    .join('');

  const title = options.title ?? `agentrl runs compared (${loaded.length})`;
  return `${reportPageStart(title, 1300, LEGEND_STYLE)}
<h1>${escapeHtml(title)}</h1>
<p>${loaded.length} runs${armNames.length > 0 ? ` in ${armNames.length} arm${armNames.length === 1 ? '' : 's'}` : ''}. Hover a point for its value.</p>
<div id="legend">${legend}</div>
${armRows ? `<h2>Held-out success per arm</h2><table id="arms"><tr><th>arm</th><th>first validation</th><th>last validation</th></tr>${armRows}</table>` : ''}
<h2>Runs</h2><table id="runs"><tr><th>run</th><th>arm</th><th>first validation (95% Wilson)</th><th>last validation (95% Wilson)</th><th>iterations</th></tr>${runRows}</table>
<h2>Curves</h2><div class="charts" id="charts">${charts || '<p>No metrics yet.</p>'}</div>
${HOVER_SCRIPT}
</body></html>
`;
}

/** Writes the overlay report of `runs` to `path` and returns it. */
export async function writeOverlayReport(
  runs: readonly OverlayRun[],
  path: string,
  options: { title?: string } = {},
): Promise<string> {
  await writeFileAtomic(path, renderOverlayReport(runs, options));
  return path;
}
