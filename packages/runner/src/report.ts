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
  'advantage/zeroFraction',
  'time/rollout',
  'time/update',
  'time/validate',
];

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return Number(v.toPrecision(4)).toString();
}

/** An inline SVG line chart of `points` (x = iteration). */
export function lineChart(title: string, points: readonly [number, number][]): string {
  const w = 360;
  const h = 200;
  const pad = { l: 48, r: 12, t: 24, b: 28 };
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs, x0 + 1);
  let y0 = Math.min(...ys);
  let y1 = Math.max(...ys);
  if (y0 === y1) {
    y0 -= 0.5;
    y1 += 0.5;
  }
  const sx = (x: number) => pad.l + ((x - x0) / (x1 - x0)) * (w - pad.l - pad.r);
  const sy = (y: number) => h - pad.b - ((y - y0) / (y1 - y0)) * (h - pad.t - pad.b);
  const path = points
    .map((p, i) => `${i === 0 ? 'M' : 'L'}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`)
    .join(' ');
  const dots = points
    .map(
      (p) =>
        `<circle cx="${sx(p[0]).toFixed(1)}" cy="${sy(p[1]).toFixed(1)}" r="2.5"><title>iteration ${p[0]}: ${fmt(p[1])}</title></circle>`,
    )
    .join('');
  return `<figure class="chart"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="${escapeHtml(title)}">
<text x="${pad.l}" y="15" class="title">${escapeHtml(title)}</text>
<line x1="${pad.l}" y1="${h - pad.b}" x2="${w - pad.r}" y2="${h - pad.b}" class="axis"/>
<line x1="${pad.l}" y1="${pad.t}" x2="${pad.l}" y2="${h - pad.b}" class="axis"/>
<text x="${pad.l - 4}" y="${sy(y1) + 4}" text-anchor="end" class="tick">${fmt(y1)}</text>
<text x="${pad.l - 4}" y="${sy(y0) + 4}" text-anchor="end" class="tick">${fmt(y0)}</text>
<text x="${pad.l}" y="${h - 8}" class="tick">${x0}</text>
<text x="${w - pad.r}" y="${h - 8}" text-anchor="end" class="tick">${x1} (iteration)</text>
<path d="${path}" class="line"/>${dots}</svg></figure>`;
}

function readJsonl(path: string): Record<string, number>[] {
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

  const keys = new Set<string>();
  for (const m of metrics)
    for (const k of Object.keys(m)) if (k !== 'iteration' && k !== 'final') keys.add(k);
  const ordered = [
    ...PREFERRED.filter((k) => keys.has(k)),
    ...[...keys].filter((k) => !PREFERRED.includes(k) && /^(val|train)\/success\//.test(k)).sort(),
  ];
  const charts = ordered
    .map((k) => {
      const pts = metrics
        .filter((m) => typeof m[k] === 'number' && Number.isFinite(m[k]))
        .map((m) => [m.iteration as number, m[k] as number] as [number, number]);
      return pts.length > 0 ? lineChart(k, pts) : '';
    })
    .join('\n');

  const headlineRows = headline
    .map((r) => {
      const ci = wilsonInterval(r.wins, r.episodes);
      return `<tr><td>${escapeHtml(r.label)}</td><td>${r.wins} / ${r.episodes}</td><td>${(ci.rate * 100).toFixed(1)}%</td><td>${(ci.low * 100).toFixed(1)}% – ${(ci.high * 100).toFixed(1)}%</td></tr>`;
    })
    .join('');
  const last = metrics.at(-1);
  const lastRows = last
    ? Object.entries(last)
        .filter(([k]) => /^(val|train)\/(success|episodeLength|validActionRatio)$/.test(k))
        .map(([k, v]) => `<tr><td>${escapeHtml(k)}</td><td colspan="3">${fmt(v)}</td></tr>`)
        .join('')
    : '';
  // JSON inside <script>: escape "<" so that no string can close the element.
  const data = JSON.stringify(samples).replace(/</g, '\\u003c');
  const title = options.title ?? 'agentrl run report';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2329;max-width:1200px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}
table{border-collapse:collapse}td,th{border:1px solid #ccd;padding:4px 10px;text-align:left}
.charts{display:flex;flex-wrap:wrap;gap:8px}.chart{margin:0;border:1px solid #e3e6ea;border-radius:6px}
.axis{stroke:#889}.line{fill:none;stroke:#2563eb;stroke-width:2}circle{fill:#2563eb}
.title{font-size:12px;font-weight:600;fill:#1d2329}.tick{font-size:10px;fill:#556}
#steps li{margin:6px 0;padding:6px;border-left:3px solid #cbd5e1;white-space:pre-wrap}
#steps li.invalid{border-color:#dc2626}#steps li.reward{border-color:#16a34a}
.won{color:#16a34a;font-weight:600}.lost{color:#b91c1c;font-weight:600}
pre{background:#f6f8fa;padding:8px;overflow:auto;max-height:300px}
</style></head><body>
<h1>${escapeHtml(title)}</h1>
<p>${metrics.length} metric records, ${samples.length} sampled trajectories.</p>
${headline.length > 0 ? `<h2>Held-out success</h2><table id="headline"><tr><th>phase</th><th>wins</th><th>success</th><th>95% interval (Wilson)</th></tr>${headlineRows}</table>` : ''}
${lastRows ? `<h2>Last record</h2><table id="last">${lastRows}</table>` : ''}
<h2>Curves</h2><div class="charts" id="charts">${charts || '<p>No metrics yet.</p>'}</div>
<h2>Trajectories</h2>
<label>Trajectory <select id="picker"></select></label>
<p id="meta"></p><ol id="steps"></ol>
${config ? `<h2>Resolved config</h2><pre id="config">${escapeHtml(config)}</pre>` : ''}
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

/** Writes `report.html` into the run folder and returns its path. */
export async function writeReport(
  runDir: string,
  options: { title?: string; headline?: readonly HeadlineRow[] } = {},
): Promise<string> {
  const path = join(runDir, 'report.html');
  await writeFileAtomic(path, renderReport(runDir, options));
  return path;
}
