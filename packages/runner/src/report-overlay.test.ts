import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test/temp-dir.ts';
import { main } from './cli.ts';
import { niceTicks } from './report.ts';
import { recordedArm, renderOverlayReport, writeOverlayReport } from './report-overlay.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);

/** A run folder with val/success `val[i]` at iterations 0, 2, 4… and train/success every iteration. */
function run(root: string, name: string, val: readonly number[], info?: unknown): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const lines: string[] = [];
  const iterations = (val.length - 1) * 2;
  for (let i = 0; i <= iterations; i++) {
    const m: Record<string, number> = { iteration: i };
    if (i < iterations) m['train/success'] = i / 10;
    if (i % 2 === 0) {
      const v = val[i / 2] as number;
      Object.assign(m, { 'val/success': v, 'val/wins': v * 20, 'val/episodes': 20 });
      if (i === iterations) m.final = 1;
    }
    lines.push(JSON.stringify(m));
  }
  writeFileSync(join(dir, 'metrics.jsonl'), `${lines.join('\n')}\n`);
  if (info !== undefined) writeFileSync(join(dir, 'config.resolved.json'), JSON.stringify(info));
  return dir;
}

/** The `<g class="series">` elements of the chart of `metric`, read back from the HTML. */
function seriesIn(html: string, metric: string) {
  const start = html.indexOf(`<figure class="chart" data-metric="${metric}">`);
  expect(start, `chart ${metric}`).toBeGreaterThanOrEqual(0);
  const figure = html.slice(start, html.indexOf('</figure>', start));
  const groups = [...figure.matchAll(/<g class="series[^"]*"([^>]*)>([\s\S]*?)<\/g>/g)];
  return {
    figure,
    series: groups.map(([, attrs, body]) => {
      const attr = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(attrs as string)?.[1];
      return {
        label: attr('data-label'),
        kind: attr('data-kind'),
        arm: attr('data-arm'),
        points: (attr('data-points') ?? '')
          .split(';')
          .map((p) => p.split(',').map(Number) as [number, number]),
        titles: [...(body as string).matchAll(/<title>([^<]*)<\/title>/g)].map((t) => t[1]),
      };
    }),
  };
}

function fourRuns(): string {
  const root = tempDir('agentrl-overlay-');
  run(root, 'seed-0/gigpo', [0.1, 0.5, 0.7], { config: { algorithm: { name: 'gigpo' } } });
  run(root, 'seed-1/gigpo', [0.2, 0.3, 0.9], { config: { algorithm: { name: 'gigpo' } } });
  run(root, 'seed-0/grpo', [0.1, 0.2, 0.3], { arm: 'grpo', config: {} });
  run(root, 'seed-1/grpo', [0.3, 0.2, 0.5], { arm: 'grpo', config: {} });
  return root;
}

describe('niceTicks', () => {
  it('covers the range with at least three evenly spaced round ticks', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        fc.double({ min: 1e-6, max: 1e6, noNaN: true }),
        (lo, width) => {
          const hi = lo + width;
          fc.pre(hi > lo && width > Math.abs(lo) * 1e-9);
          const ticks = niceTicks(lo, hi);
          expect(ticks.length).toBeGreaterThanOrEqual(3);
          expect(ticks[0]).toBeLessThanOrEqual(lo + width * 1e-9);
          expect(ticks.at(-1)).toBeGreaterThanOrEqual(hi - width * 1e-9);
          const step = (ticks[1] as number) - (ticks[0] as number);
          const mantissa = step / 10 ** Math.floor(Math.log10(step));
          expect([1, 2, 5, 10].some((m) => Math.abs(mantissa - m) < 1e-4)).toBe(true);
        },
      ),
    );
  });

  it('steps by whole iterations on the x axis', () => {
    expect(niceTicks(0, 12, 6, true)).toEqual([0, 2, 4, 6, 8, 10, 12]);
    expect(niceTicks(0, 3, 6, true)).toEqual([0, 1, 2, 3]);
  });
});

describe('the overlay report of several runs', () => {
  it('draws each run and, per arm, the mean with a ±1 sd band', () => {
    const root = fourRuns();
    const dirs = ['seed-0/gigpo', 'seed-1/gigpo', 'seed-0/grpo', 'seed-1/grpo'].map((d) =>
      join(root, d),
    );
    expect(recordedArm(dirs[0] as string)).toBe('gigpo');
    expect(recordedArm(dirs[2] as string)).toBe('grpo');
    const html = renderOverlayReport(dirs.map((dir) => ({ dir })));
    const { figure, series } = seriesIn(html, 'val/success');
    const runs = series.filter((s) => s.kind === 'run');
    expect(runs.map((s) => s.label).sort()).toEqual([
      'seed-0/gigpo',
      'seed-0/grpo',
      'seed-1/gigpo',
      'seed-1/grpo',
    ]);
    expect(runs.find((s) => s.label === 'seed-1/gigpo')?.points).toEqual([
      [0, 0.2],
      [2, 0.3],
      [4, 0.9],
    ]);
    const gigpo = series.find((s) => s.kind === 'mean' && s.arm === 'gigpo');
    expect(gigpo?.label).toBe('gigpo mean (2 runs)');
    gigpo?.points.forEach(([x, y], k) => {
      expect(x).toBe([0, 2, 4][k]);
      expect(y).toBeCloseTo([0.15, 0.4, 0.8][k] as number, 12);
    });
    expect(figure).toMatch(
      /<path class="band" data-label="gigpo mean \(2 runs\)" data-arm="gigpo"/,
    );
    expect(series.filter((s) => s.kind === 'mean').map((s) => s.arm)).toEqual(['gigpo', 'grpo']);
    // Readable axes: more than two ticks, and every point carries its value for hovering.
    expect((figure.match(/class="tick"/g) ?? []).length).toBeGreaterThan(6);
    expect(gigpo?.titles.find((t) => t?.includes('iteration 2'))).toMatch(
      /^gigpo mean \(2 runs\) · iteration 2: 0\.4 \(± sd: 0\.2586 – 0\.5414\)$/,
    );
    // The per-arm table: first and last validation, mean ± sd over the runs.
    expect(html).toMatch(
      /gigpo<\/td><td>15\.0% ± 7\.1% \(n 2\)<\/td><td>80\.0% ± 14\.1% \(n 2\)<\/td>/,
    );
    // One offline file: no address outside it.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('plots runs without an arm as runs only', () => {
    const root = tempDir('agentrl-overlay-');
    const a = run(root, 'a', [0.1, 0.4]);
    const b = run(root, 'b', [0.2, 0.6]);
    const { series } = seriesIn(renderOverlayReport([{ dir: a }, { dir: b }]), 'train/success');
    expect(series.map((s) => [s.label, s.kind])).toEqual([
      ['a', 'run'],
      ['b', 'run'],
    ]);
  });

  it('is written by agentrl report with several folders, arms given as ARM=DIR', async () => {
    const root = fourRuns();
    const out = join(root, 'compare.html');
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let text = '';
    let err = '';
    stdout.on('data', (d: Buffer) => {
      text += d.toString();
    });
    stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const code = await main(
      [
        'report',
        `x=${join(root, 'seed-0/gigpo')}`,
        `y=${join(root, 'seed-1/gigpo')}`,
        join(root, 'seed-0/grpo'),
        '--out',
        out,
      ],
      { stdout, stderr: stderr as unknown as NodeJS.WriteStream },
    );
    expect(code, err).toBe(0);
    expect(text).toBe(`report: ${out}\n`);
    const { series } = seriesIn(readFileSync(out, 'utf8'), 'val/success');
    expect(series.filter((s) => s.kind === 'mean').map((s) => s.label)).toEqual([
      'x mean (1 run)',
      'y mean (1 run)',
      'grpo mean (1 run)',
    ]);
  });

  it('refuses an empty list of runs with a clear error', () => {
    expect(() => renderOverlayReport([])).toThrow(/at least one run folder/);
  });

  it.skipIf(!hasChromium)(
    'opens offline in headless Chromium and shows a value when a point is hovered',
    async () => {
      const root = fourRuns();
      const path = await writeOverlayReport(
        ['seed-0/gigpo', 'seed-1/gigpo', 'seed-0/grpo', 'seed-1/grpo'].map((d) => ({
          dir: join(root, d),
        })),
        join(root, 'compare.html'),
      );
      const { default: puppeteer } = await import('puppeteer-core');
      const browser = await puppeteer.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
      });
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        const requests: string[] = [];
        page.on('pageerror', (e) => errors.push(String(e)));
        page.on('request', (r) => requests.push(r.url()));
        await page.goto(pathToFileURL(path).href, { waitUntil: 'load' });
        expect(errors).toEqual([]);
        expect(requests.every((u) => u.startsWith('file:'))).toBe(true);
        expect(await page.$$eval('#charts svg', (els) => els.length)).toBe(2);
        await page.hover('figure[data-metric="val/success"] g.mean circle');
        const tip = await page.$eval('#tip', (e) => ({
          text: e.textContent,
          shown: (e as unknown as { style: { display: string } }).style.display === 'block',
        }));
        expect(tip.shown).toBe(true);
        expect(tip.text).toMatch(/iteration 0: 0\.15/);
      } finally {
        await browser.close();
      }
    },
  );
});
