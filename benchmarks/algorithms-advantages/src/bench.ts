/**
 * GiGPO advantages: @agentrl/algorithms against verl-agent's Python reference, on identical
 * batches, in the same run.
 *
 *   pnpm --filter @agentrl-bench/algorithms-advantages bench --verl-agent /path/to/verl-agent
 *
 * Options: --verl-agent PATH (or env VERL_AGENT; without it the reference is skipped),
 * --python PATH (default /usr/bin/python3, which needs python3-torch and python3-numpy),
 * --reference-repeats N (default 3), --only NAME.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { computeGiGPOAdvantages } from '@agentrl/algorithms';
import { dropArgsSeparator } from '@agentrl/core';
import { alfworldWorkload, scaleWorkload, searchWorkload, type Workload } from './workloads.ts';

const { values } = parseArgs({
  args: dropArgsSeparator(process.argv.slice(2)),
  options: {
    'verl-agent': { type: 'string' },
    python: { type: 'string', default: '/usr/bin/python3' },
    'reference-repeats': { type: 'string', default: '3' },
    only: { type: 'string' },
  },
});
const checkout = values['verl-agent'] ?? process.env['VERL_AGENT'];
const python = values.python;
const referenceRepeats = Number(values['reference-repeats']);
const harness = new URL('../reference_harness.py', import.meta.url).pathname;

interface ReferenceRun {
  times: number[];
  cpuTimes: number[];
  advantages: number[];
  stepGroupIds: number[];
  torch: string;
  numpy: string;
  python: string;
  threads: number;
}

function runReference(w: Workload): ReferenceRun | undefined {
  if (checkout === undefined) return undefined;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agentrl-bench-'));
  try {
    const file = path.join(dir, 'batch.json');
    writeFileSync(file, JSON.stringify({ batch: w.batch, options: w.options }));
    const r = spawnSync(python, [harness, checkout, file, String(referenceRepeats)], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    });
    if (r.status !== 0) throw new Error(`reference harness failed (${r.status}):\n${r.stderr}`);
    return JSON.parse(r.stdout) as ReferenceRun;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Wall-clock and process CPU milliseconds of each call (CPU time includes V8's GC threads). */
function measure(
  w: Workload,
  minRuns: number,
  minMillis: number,
): { wall: number[]; cpu: number[] } {
  for (let k = 0; k < 3; k++) computeGiGPOAdvantages(w.batch, w.options); // warm-up (JIT)
  const wall: number[] = [];
  const cpu: number[] = [];
  const started = performance.now();
  while (wall.length < minRuns || performance.now() - started < minMillis) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    computeGiGPOAdvantages(w.batch, w.options);
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { wall, cpu };
}

const best = (xs: readonly number[]) => Math.min(...xs);
const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function samePartition(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  const f = new Map<number, number>();
  const g = new Map<number, number>();
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if ((f.get(x) ?? y) !== y || (g.get(y) ?? x) !== x) return false;
    f.set(x, y);
    g.set(y, x);
  }
  return a.length === b.length;
}

const workloads: (() => Workload)[] = [alfworldWorkload, searchWorkload, scaleWorkload];
console.log(
  `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(
  '| workload | samples | step groups | agentrl best / median (ms) | reference best / median (ms) | speed-up (best/best) | CPU ms, agentrl / reference (best) | agreement |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
let referenceInfo = '';
for (const make of workloads) {
  const w = make();
  if (values.only !== undefined && w.name !== values.only) continue;
  const n = w.batch.groupIds.length;
  const isScale = n >= 1_000_000;
  const { wall: ours, cpu } = measure(w, isScale ? 9 : 30, isScale ? 0 : 1000);
  const result = computeGiGPOAdvantages(w.batch, w.options);
  const stepGroups = new Set(result.stepGroupIds).size;
  // The reference is quadratic in the batch size (np.where per row): hours at 1M, so not run.
  const ref = isScale ? undefined : runReference(w);
  let refCell = 'not run';
  let speedup = '–';
  let cpuCell = best(cpu).toFixed(1);
  let agreement = '–';
  if (ref !== undefined) {
    referenceInfo = `Python ${ref.python}, torch ${ref.torch}, numpy ${ref.numpy}, ${ref.threads} torch threads`;
    const refMs = ref.times.map((t) => t * 1000);
    refCell = `${best(refMs).toFixed(0)} / ${median(refMs).toFixed(0)}`;
    speedup = `${(best(refMs) / best(ours)).toFixed(0)}×`;
    const refCpu = best(ref.cpuTimes) * 1000;
    cpuCell = `${best(cpu).toFixed(1)} / ${refCpu.toFixed(0)} (${(refCpu / best(cpu)).toFixed(0)}×)`;
    let maxDiff = 0;
    for (let i = 0; i < n; i++)
      maxDiff = Math.max(maxDiff, Math.abs(result.advantages[i]! - ref.advantages[i]!));
    agreement = `groups ${samePartition(result.stepGroupIds, ref.stepGroupIds) ? 'identical' : 'DIFFER'}, max |Δadv| ${maxDiff.toExponential(1)} (ref. float32)`;
  } else if (isScale) {
    refCell = 'not run (quadratic)';
  }
  console.log(
    `| ${w.name} | ${n.toLocaleString('en-US')} | ${stepGroups.toLocaleString('en-US')} | ${best(ours).toFixed(2)} / ${median(ours).toFixed(2)} | ${refCell} | ${speedup} | ${cpuCell} | ${agreement} |`,
  );
}
if (referenceInfo !== '')
  console.log(`\nreference: verl-agent gigpo/core_gigpo.py, ${referenceInfo}`);
console.log(
  `load average at the end: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
