/**
 * The HTML run report: one self-contained file (inline SVG plots, inline script, no CDN) with the
 * headline numbers, the learning curves from metrics.jsonl and a browser for the sampled
 * trajectories under samples/.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './files.ts';
import type { SampleTrajectory } from './samples.ts';
import { wilsonInterval } from './stats.ts';

/** One headline row: a success count on held-out games (before / after a phase). */
export interface HeadlineRow {
  readonly label: string;
  readonly wins: number;
  readonly episodes: number;
  /**
   * The env's own metrics on the same games, by label (`{ "WebShop score": 61.3 }`): one more
   * report column per label.
   */
  readonly metrics?: Readonly<Record<string, number>>;
}

/** The curves the report plots when present, in order (others with these prefixes follow). */
const PREFERRED = [
  'val/success',
  'train/success',
  'train/episodeLength',
  'train/validActionRatio',
  'val/validActionRatio',
  'policy/klBeforeAfter',
  'policy/absDeltaLogProb',
  'policy/entropy',
  'train/negLogProb',
  'update/keptFraction',
  'update/optimizerSteps',
  'update/gradNorm',
  'update/gradNormMax',
  'update/pgClipfrac',
  'update/ppoKl',
  'update/entropyLoss',
  'update/loss',
  'update/pgLoss',
  'update/klLoss',
  'update/numTensors',
  'stepGroups/sizeMean',
  'stepGroups/singletonFraction',
  'stepGroups/oneActionFraction',
  'advantage/zeroFraction',
  'time/rollout',
  'time/update',
  'time/validate',
];

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return Number(v.toPrecision(4)).toString();
}

/**
 * About `target` evenly spaced round values (steps of 1, 2 or 5 × 10^k) covering [lo, hi]; the
 * first is at or below `lo`, the last at or above `hi`. `integer` keeps steps of at least 1.
 */
export function niceTicks(lo: number, hi: number, target = 5, integer = false): number[] {
  if (!(Number.isFinite(lo) && Number.isFinite(hi))) return [0, 1];
  if (hi < lo) [lo, hi] = [hi, lo];
  if (hi === lo) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const raw = (hi - lo) / Math.max(1, target - 1);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  // The round step nearest to the raw one (on a log scale).
  const nearest = [1, 2, 5, 10].reduce((best, m) =>
    Math.abs(Math.log((m * magnitude) / raw)) < Math.abs(Math.log((best * magnitude) / raw))
      ? m
      : best,
  );
  let step = nearest * magnitude;
  if (integer) step = Math.max(1, Math.round(step));
  const first = Math.floor(lo / step + 1e-9) * step;
  const ticks: number[] = [];
  for (let v = first; v < hi + step - step * 1e-9; v += step)
    ticks.push(Number((Math.round(v / step) * step).toPrecision(15)));
  if (ticks.length < 2) ticks.push(Number((first + step).toPrecision(15)));
  return ticks;
}

/** One line of a chart: points (x = iteration), and for an arm's mean the band around it. */
export interface ChartSeries {
  readonly label: string;
  readonly points: readonly [number, number][];
  /** CSS colour. Default the report's blue. */
  readonly color?: string;
  /** `run`: one run's curve; `mean`: an arm's mean (drawn thicker). Default `run`. */
  readonly kind?: 'run' | 'mean';
  /** The arm the line belongs to (written as `data-arm`). */
  readonly arm?: string;
  /** [x, low, high] of the band drawn under the line (an arm's mean ± sd). */
  readonly band?: readonly [number, number, number][];
  /** Draw this line faintly (single runs under their arms' means). */
  readonly faint?: boolean;
}

/**
 * An inline SVG line chart: rounded ticks and grid lines on both axes (x = iteration), a point per
 * value with its exact value as a hover title, and shaded bands for arm means. Every series is a
 * `<g class="series">` carrying `data-label`, `data-kind`, `data-arm` and `data-points`
 * (`x,y;x,y…`), so tools can read the plotted values back from the file.
 */
export function renderChart(title: string, series: readonly ChartSeries[]): string {
  const w = 400;
  const h = 230;
  const pad = { l: 52, r: 14, t: 26, b: 34 };
  const all = series.flatMap((s) => s.points);
  const xs = all.map((p) => p[0]);
  const ys = [
    ...all.map((p) => p[1]),
    ...series.flatMap((s) => (s.band ?? []).flatMap((b) => [b[1], b[2]])),
  ];
  const xTicks = niceTicks(Math.min(...xs), Math.max(...xs, Math.min(...xs) + 1), 6, true);
  const yTicks = niceTicks(Math.min(...ys), Math.max(...ys), 5);
  const x0 = xTicks[0] as number;
  const x1 = xTicks.at(-1) as number;
  const y0 = yTicks[0] as number;
  const y1 = yTicks.at(-1) as number;
  const sx = (x: number) => pad.l + ((x - x0) / (x1 - x0)) * (w - pad.l - pad.r);
  const sy = (y: number) => h - pad.b - ((y - y0) / (y1 - y0)) * (h - pad.t - pad.b);
  const grid = [
    ...yTicks.map(
      (v) =>
        `<line x1="${pad.l}" y1="${sy(v).toFixed(1)}" x2="${w - pad.r}" y2="${sy(v).toFixed(1)}" class="grid"/><text x="${pad.l - 5}" y="${(sy(v) + 3.5).toFixed(1)}" text-anchor="end" class="tick">${fmt(v)}</text>`,
    ),
    ...xTicks.map(
      (v) =>
        `<line x1="${sx(v).toFixed(1)}" y1="${pad.t}" x2="${sx(v).toFixed(1)}" y2="${h - pad.b}" class="grid"/><text x="${sx(v).toFixed(1)}" y="${h - pad.b + 13}" text-anchor="middle" class="tick">${v}</text>`,
    ),
  ].join('');
  const order = [...series].sort((a, b) => Number(a.kind === 'mean') - Number(b.kind === 'mean'));
  // Bands first, under every line, and transparent to the pointer so points stay hoverable.
  const bands = order
    .filter((s) => s.band !== undefined && s.band.length > 0)
    .map((s) => {
      const band = s.band as readonly [number, number, number][];
      const d = [
        ...band.map(
          (b, i) => `${i === 0 ? 'M' : 'L'}${sx(b[0]).toFixed(1)},${sy(b[2]).toFixed(1)}`,
        ),
        ...[...band].reverse().map((b) => `L${sx(b[0]).toFixed(1)},${sy(b[1]).toFixed(1)}`),
      ].join(' ');
      return `<path class="band" data-label="${escapeHtml(s.label)}"${s.arm !== undefined ? ` data-arm="${escapeHtml(s.arm)}"` : ''} fill="${s.color ?? '#2563eb'}" d="${d} Z"/>`;
    })
    .join('');
  const lines = order
    .map((s) => {
      const color = s.color ?? '#2563eb';
      const kind = s.kind ?? 'run';
      const path = s.points
        .map((p, i) => `${i === 0 ? 'M' : 'L'}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`)
        .join(' ');
      const dots = s.points
        .map((p, i) => {
          const b = s.band?.find((q) => q[0] === p[0]);
          const extra = b !== undefined ? ` (± sd: ${fmt(b[1])} – ${fmt(b[2])})` : '';
          return `<circle cx="${sx(p[0]).toFixed(1)}" cy="${sy(p[1]).toFixed(1)}" r="${kind === 'mean' ? 3 : 2.5}" data-i="${i}"><title>${escapeHtml(s.label)} · iteration ${p[0]}: ${fmt(p[1])}${extra}</title></circle>`;
        })
        .join('');
      const data = s.points.map((p) => `${p[0]},${p[1]}`).join(';');
      return `<g class="series ${kind}${s.faint ? ' faint' : ''}" data-label="${escapeHtml(s.label)}" data-kind="${kind}"${s.arm !== undefined ? ` data-arm="${escapeHtml(s.arm)}"` : ''} data-points="${data}" style="color:${color}"><path d="${path}" class="line"/>${dots}</g>`;
    })
    .join('');
  return `<figure class="chart" data-metric="${escapeHtml(title)}"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="${escapeHtml(title)}">
<text x="${pad.l}" y="16" class="title">${escapeHtml(title)}</text>${grid}
<line x1="${pad.l}" y1="${h - pad.b}" x2="${w - pad.r}" y2="${h - pad.b}" class="axis"/>
<line x1="${pad.l}" y1="${pad.t}" x2="${pad.l}" y2="${h - pad.b}" class="axis"/>
<text x="${((pad.l + w - pad.r) / 2).toFixed(1)}" y="${h - 5}" text-anchor="middle" class="tick">iteration</text>
${bands}${lines}</svg></figure>`;
}

/** An inline SVG line chart of one series `points` (x = iteration). */
export function lineChart(title: string, points: readonly [number, number][]): string {
  return renderChart(title, [{ label: title, points }]);
}

/** Chart styles shared by the run report and the overlay report. */
export const CHART_STYLE = `.charts{display:flex;flex-wrap:wrap;gap:8px}.chart{margin:0;border:1px solid #e3e6ea;border-radius:6px}
.axis{stroke:#889}.grid{stroke:#eceff3}.line{fill:none;stroke:currentColor;stroke-width:2}
circle{fill:currentColor;stroke:transparent;stroke-width:8}.series.faint .line{stroke-width:1.2;opacity:.45}
.series.faint circle{opacity:.45}.series.mean .line{stroke-width:2.6}.band{opacity:.16;stroke:none;pointer-events:none}
.title{font-size:12px;font-weight:600;fill:#1d2329}.tick{font-size:10px;fill:#556}
#tip{position:fixed;pointer-events:none;background:#1d2329;color:#fff;font-size:12px;padding:3px 7px;border-radius:4px;display:none;white-space:nowrap}`;

/**
 * The start of a report page, up to and with `<body>`: the title, the page and table styles both
 * reports use, {@link CHART_STYLE}, then the page's own `style`.
 */
export function reportPageStart(title: string, maxWidthPx: number, style: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2329;max-width:${maxWidthPx}px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}
table{border-collapse:collapse}td,th{border:1px solid #ccd;padding:4px 10px;text-align:left}
${CHART_STYLE}
${style}
</style></head><body>`;
}

/** The run report's own styles: the trajectory viewer and the resolved config. */
const RUN_REPORT_STYLE = `#steps li{margin:6px 0;padding:6px;border-left:3px solid #cbd5e1;white-space:pre-wrap}
#steps li.invalid{border-color:#dc2626}#steps li.reward{border-color:#16a34a}
.won{color:#16a34a;font-weight:600}.lost{color:#b91c1c;font-weight:600}
pre{background:#f6f8fa;padding:8px;overflow:auto;max-height:300px}`;

/** Shows a point's value at once on hover (the SVG titles also work without script). */
export const HOVER_SCRIPT = `<div id="tip"></div><script>
(function () {
  var tip = document.getElementById('tip');
  document.addEventListener('mouseover', function (e) {
    var t = e.target;
    if (!t || t.tagName !== 'circle' || !t.querySelector('title')) { tip.style.display = 'none'; return; }
    tip.textContent = t.querySelector('title').textContent;
    tip.style.display = 'block';
  });
  document.addEventListener('mousemove', function (e) {
    tip.style.left = e.clientX + 12 + 'px';
    tip.style.top = e.clientY + 12 + 'px';
  });
})();
</script>`;

/** The metric names to chart for these runs' records, in the report's order. */
export function chartKeys(runs: readonly (readonly Record<string, number>[])[]): string[] {
  const keys = new Set<string>();
  for (const metrics of runs)
    for (const m of metrics)
      for (const k of Object.keys(m)) if (k !== 'iteration' && k !== 'final') keys.add(k);
  return [
    ...PREFERRED.filter((k) => keys.has(k)),
    ...[...keys]
      .filter((k) => !PREFERRED.includes(k) && /^(val|train)\/(success|env)\//.test(k))
      .sort(),
  ];
}

/** [iteration, value] of metric `key` over the records that hold a finite value of it. */
export function seriesOf(
  metrics: readonly Record<string, number>[],
  key: string,
): [number, number][] {
  return metrics
    .filter((m) => typeof m[key] === 'number' && Number.isFinite(m[key]))
    .map((m) => [m.iteration as number, m[key] as number]);
}

export function readJsonl(path: string): Record<string, number>[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim().length > 0)
    .map((l) => JSON.parse(l) as Record<string, number>);
}

/** Renders the report HTML of a run folder (metrics.jsonl, samples/, headline.json, config.resolved.json). */
export function renderReport(
  runDir: string,
  options: { title?: string; headline?: readonly HeadlineRow[] } = {},
): string {
  const metrics = readJsonl(join(runDir, 'metrics.jsonl'));
  const headlinePath = join(runDir, 'headline.json');
  const headline: readonly HeadlineRow[] =
    options.headline ??
    (existsSync(headlinePath)
      ? (JSON.parse(readFileSync(headlinePath, 'utf8')) as HeadlineRow[])
      : []);
  const samplesDir = join(runDir, 'samples');
  const samples: SampleTrajectory[] = [];
  if (existsSync(samplesDir)) {
    const files = readdirSync(samplesDir).filter((f) => f.endsWith('.json'));
    const order = (f: string) => Number(/-(\d+)\.json$/.exec(f)?.[1] ?? 0);
    files.sort((a, b) => order(a) - order(b) || a.localeCompare(b));
    for (const f of files)
      samples.push(
        ...(JSON.parse(readFileSync(join(samplesDir, f), 'utf8')) as SampleTrajectory[]),
      );
  }
  const configPath = join(runDir, 'config.resolved.json');
  const config = existsSync(configPath) ? readFileSync(configPath, 'utf8') : '';

  const charts = chartKeys([metrics])
    .map((k) => {
      const pts = seriesOf(metrics, k);
      return pts.length > 0 ? lineChart(k, pts) : '';
    })
    .join('\n');

  const extra = [...new Set(headline.flatMap((r) => Object.keys(r.metrics ?? {})))];
  const headlineRows = headline
    .map((r) => {
      const ci = wilsonInterval(r.wins, r.episodes);
      const cells = extra
        .map((k) => `<td>${r.metrics?.[k] === undefined ? '' : fmt(r.metrics[k] as number)}</td>`)
        .join('');
      return `<tr><td>${escapeHtml(r.label)}</td><td>${r.wins} / ${r.episodes}</td><td>${(ci.rate * 100).toFixed(1)}%</td><td>${(ci.low * 100).toFixed(1)}% – ${(ci.high * 100).toFixed(1)}%</td>${cells}</tr>`;
    })
    .join('');
  const extraHeads = extra.map((k) => `<th>${escapeHtml(k)}</th>`).join('');
  const last = metrics.at(-1);
  const lastRows = last
    ? Object.entries(last)
        .filter(([k]) => /^(val|train)\/(success|episodeLength|validActionRatio|env\/.+)$/.test(k))
        .map(([k, v]) => `<tr><td>${escapeHtml(k)}</td><td colspan="3">${fmt(v)}</td></tr>`)
        .join('')
    : '';
  // JSON inside <script>: escape "<" so that no string can close the element.
  const data = JSON.stringify(samples).replace(/</g, '\\u003c');
  const title = options.title ?? 'agentrl run report';
  return `${reportPageStart(title, 1200, RUN_REPORT_STYLE)}
<h1>${escapeHtml(title)}</h1>
<p>${metrics.length} metric records, ${samples.length} sampled trajectories.</p>
${headline.length > 0 ? `<h2>Held-out success</h2><table id="headline"><tr><th>phase</th><th>wins</th><th>success</th><th>95% interval (Wilson)</th>${extraHeads}</tr>${headlineRows}</table>` : ''}
${lastRows ? `<h2>Last record</h2><table id="last">${lastRows}</table>` : ''}
<h2>Curves</h2><div class="charts" id="charts">${charts || '<p>No metrics yet.</p>'}</div>
<h2>Trajectories</h2>
<label>Trajectory <select id="picker"></select></label>
<p id="meta"></p><ol id="steps"></ol>
${config ? `<h2>Resolved config</h2><pre id="config">${escapeHtml(config)}</pre>` : ''}
${HOVER_SCRIPT}
<script type="application/json" id="samples-data">${data}</script>
<script>
(function () {
  var samples = JSON.parse(document.getElementById('samples-data').textContent);
  var picker = document.getElementById('picker');
  var meta = document.getElementById('meta');
  var list = document.getElementById('steps');
  samples.forEach(function (s, i) {
    var o = document.createElement('option');
    o.value = String(i);
    o.textContent = s.name + ' · ' + s.trajectoryId + ' · ' + s.taskType + ' · ' + (s.won ? 'won' : 'lost') + ' in ' + s.length;
    picker.appendChild(o);
  });
  function show(i) {
    var s = samples[i];
    list.textContent = '';
    if (!s) { meta.textContent = 'No trajectories were sampled.'; return; }
    meta.innerHTML = '';
    var b = document.createElement('span');
    b.className = s.won ? 'won' : 'lost';
    b.textContent = s.won ? 'won' : 'lost';
    meta.appendChild(b);
    meta.appendChild(document.createTextNode(' · iteration ' + s.iteration + ' · ' + s.length + ' steps' + (s.envFailure ? ' · env failure: ' + s.envFailure : '')));
    s.steps.forEach(function (st, k) {
      var li = document.createElement('li');
      if (!st.valid) li.className = 'invalid';
      else if (st.reward > 0) li.className = 'reward';
      li.textContent = 'Observation: ' + st.observation + '\\nResponse: ' + st.response + '\\nAction: ' + st.action + (st.valid ? '' : ' (invalid format)') + ' · reward ' + st.reward;
      list.appendChild(li);
    });
  }
  picker.addEventListener('change', function () { show(Number(picker.value)); });
  show(0);
})();
</script>
</body></html>
`;
}

/** Writes the run's report (default `report.html` in the run folder) and returns its path. */
export async function writeReport(
  runDir: string,
  options: { title?: string; headline?: readonly HeadlineRow[]; path?: string } = {},
): Promise<string> {
  const path = options.path ?? join(runDir, 'report.html');
  await writeFileAtomic(path, renderReport(runDir, options));
  return path;
}
