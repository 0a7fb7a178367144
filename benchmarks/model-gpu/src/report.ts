/** The benchmark's JSON report, the PyTorch harness's output schema, and the printed table. */
import { z } from 'zod';
import type { Workload } from './shapes.ts';
import type { TfjsResult } from './tfjs-side.ts';

const TorchPrecision = z.object({ ms: z.number(), tokensPerSecond: z.number() });

export const TorchWorkloadResult = z.union([
  z.object({
    ms: z.number(),
    tokens: z.number(),
    tokensPerSecond: z.number(),
    precisions: z.record(z.string(), TorchPrecision).optional(),
    microBatchSize: z.number().optional(),
    trainableParameters: z.number().optional(),
    parameters: z.number(),
    peakAllocatedBytes: z.number().optional(),
    peakReservedBytes: z.number().optional(),
  }),
  z.object({ error: z.string() }),
]);
export type TorchWorkloadResult = z.infer<typeof TorchWorkloadResult>;

export const TorchOutput = z.object({
  torch: z.string(),
  cuda: z.string().nullable(),
  device: z.string(),
  deviceName: z.string(),
  attention: z.string(),
  threads: z.number(),
  dtype: z.string(),
  results: z.record(z.string(), TorchWorkloadResult),
});
export type TorchOutput = z.infer<typeof TorchOutput>;

export type Failed = { readonly error: string };

export interface WorkloadReport {
  readonly workload: Workload;
  tfjs?: TfjsResult | Failed;
  torch?: TorchWorkloadResult;
  /** tfjs tokens/s ÷ torch fp32 tokens/s. */
  ratio?: number;
  /** tfjs pool peak ÷ torch's peak (reserved on CUDA, allocated on CPU). */
  memoryRatio?: number;
}

export interface BenchReport {
  readonly startedAt: string;
  finishedAt?: string;
  readonly shapes: string;
  readonly argv: readonly string[];
  readonly machine: { node: string; platform: string; cpu: string; cores: number };
  /** GPU name and driver as far as they are known (adapter, nvidia-smi). */
  gpu?: { name: string; driver: string; software: boolean; nvidiaSmi?: string };
  webgpu?: unknown;
  torch?: Omit<TorchOutput, 'results'> | Failed;
  readonly workloads: WorkloadReport[];
  /** The fused kernels turned on in the main run (`--fused-on`; the others at their default). */
  fusedOn?: readonly string[];
  /** The fused kernels turned off in the main run (`--fused-off`). */
  fusedOff?: readonly string[];
  /** `--ab-fused`: the tfjs side again with one fused kernel flipped at a time. */
  abFused?: AbRun[];
  readonly notes: string[];
}

/** One A/B pass: the workloads with fused kernel `kernel` set to `on` (the rest as in the main run). */
export interface AbRun {
  readonly kernel: string;
  /** The kernel's setting in this pass: the opposite of the main run's. */
  readonly on: boolean;
  readonly results: Record<
    string,
    { ms: number; kernelMs: number | null; peakPoolBytes: number } | Failed
  >;
}

/** The main run's changes to the default fused kernels, as a parenthesis (or nothing). */
function mainRunNote(report: BenchReport): string {
  const parts = [
    ...(report.fusedOn?.length ? [`${report.fusedOn.join(', ')} on`] : []),
    ...(report.fusedOff?.length ? [`${report.fusedOff.join(', ')} off`] : []),
  ];
  return parts.length === 0 ? '' : ` (main run: ${parts.join('; ')})`;
}

const isFailed = (x: object | undefined): x is Failed => x !== undefined && 'error' in x;

/** Fills in the ratio of every workload that has both sides. */
export function computeRatios(report: BenchReport): void {
  for (const w of report.workloads) {
    if (w.tfjs === undefined || w.torch === undefined || isFailed(w.tfjs) || isFailed(w.torch)) {
      delete w.ratio;
      continue;
    }
    w.ratio = w.tfjs.tokensPerSecond / w.torch.tokensPerSecond;
    const torchPeak = w.torch.peakReservedBytes ?? w.torch.peakAllocatedBytes;
    if (torchPeak !== undefined && torchPeak > 0) w.memoryRatio = w.tfjs.peakPoolBytes / torchPeak;
    else delete w.memoryRatio;
  }
}

const mib = (bytes: number | undefined): string =>
  bytes === undefined ? '–' : (bytes / 2 ** 20).toFixed(0);
const num = (x: number, digits = 0): string =>
  x >= 100 || digits === 0 ? x.toFixed(0) : x.toFixed(digits);

/** A markdown table of the report, one row per workload. */
export function renderTable(report: BenchReport): string {
  const lines = [
    '| workload | tokens/step | tfjs-webgpu ms | tfjs tok/s | torch fp32 ms | torch tok/s | tfjs ÷ torch | GPU busy | host issuing kernels: ms (% of step, µs/dispatch) | dispatches/step | tfjs peak MiB (in use / pool) | torch peak MiB (alloc / reserved) | pool ÷ torch peak |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const w of report.workloads) {
    const t = w.tfjs;
    const p = w.torch;
    const cells: string[] = [w.workload.name];
    const tokens = !isFailed(t) && t ? t.tokens : !isFailed(p) && p ? p.tokens : undefined;
    cells.push(tokens === undefined ? '–' : String(tokens));
    if (t === undefined) cells.push('–', '–');
    else if (isFailed(t)) cells.push(`failed: ${t.error.slice(0, 60)}`, '–');
    else cells.push(num(t.ms, 1), num(t.tokensPerSecond));
    if (p === undefined) cells.push('–', '–');
    else if (isFailed(p)) cells.push(`failed: ${p.error.slice(0, 60)}`, '–');
    else cells.push(num(p.ms, 2), num(p.tokensPerSecond));
    cells.push(w.ratio === undefined ? '–' : `${w.ratio.toFixed(3)}×`);
    if (t === undefined || isFailed(t)) cells.push('–', '–', '–', '–');
    else {
      cells.push(
        t.busyFraction === null ? 'n/a' : `${(100 * t.busyFraction).toFixed(0)} %`,
        `${num(t.hostMs, 1)} (${(100 * t.hostFraction).toFixed(0)} %, ${t.dispatches > 0 ? ((1000 * t.hostMs) / t.dispatches).toFixed(0) : '–'})`,
        t.dispatchesPerToken === undefined
          ? String(t.dispatches)
          : `${t.dispatches} (${t.dispatchesPerToken.toFixed(0)}/token)`,
        `${mib(t.peakInUseBytes)} / ${mib(t.peakPoolBytes)}`,
      );
    }
    cells.push(
      p === undefined || isFailed(p) || p.peakAllocatedBytes === undefined
        ? 'n/a'
        : `${mib(p.peakAllocatedBytes)} / ${mib(p.peakReservedBytes)}`,
      w.memoryRatio === undefined ? '–' : `${w.memoryRatio.toFixed(2)}×`,
    );
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** Extra torch precisions (TF32, BF16 autocast) of the block rows, as lines. */
export function renderPrecisions(report: BenchReport): string[] {
  const out: string[] = [];
  for (const w of report.workloads) {
    const p = w.torch;
    if (p === undefined || isFailed(p) || p.precisions === undefined) continue;
    const parts = Object.entries(p.precisions).map(([k, v]) => `${k} ${v.ms.toFixed(2)} ms`);
    if (parts.length > 1) out.push(`${w.workload.name}: torch ${parts.join(', ')}`);
  }
  return out;
}

/** The top `n` kernels of each workload's profile, as markdown tables (one per workload). */
export function renderProfiles(report: BenchReport, n = 15): string[] {
  const out: string[] = [];
  for (const w of report.workloads) {
    const t = w.tfjs;
    if (t === undefined || isFailed(t) || t.profile === undefined) continue;
    const p = t.profile;
    out.push(
      '',
      `${w.workload.name}: top ${Math.min(n, p.entries.length)} of ${p.entries.length} kernel groups, ${p.attributed} of ${p.timed} timed dispatches attributed, ${p.kernelMs.toFixed(2)} ms of kernels in a ${t.ms.toFixed(1)} ms step`,
      '',
      '| kernel | program | shapes | count | GPU ms | % of kernels | % of step | GFLOP/s | GB/s |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const e of p.entries.slice(0, n)) {
      out.push(
        `| ${e.kernel} | ${e.program} | ${e.shapes} | ${e.count} | ${e.totalMs.toFixed(3)} | ${(100 * e.kernelShare).toFixed(1)} | ${(100 * e.stepShare).toFixed(1)} | ${e.gflopsPerSecond === undefined ? '–' : e.gflopsPerSecond.toFixed(1)} | ${e.gbPerSecond.toFixed(2)} |`,
      );
    }
  }
  return out;
}

/** The A/B passes: each workload's step time with one fused kernel flipped, against the main run. */
export function renderAb(report: BenchReport): string[] {
  const runs = report.abFused ?? [];
  if (runs.length === 0) return [];
  const lines = [
    '',
    `A/B of the fused kernels: step ms (÷ main run) with one kernel flipped${mainRunNote(report)}`,
    '',
    `| workload | main run | ${runs.map((r) => `${r.kernel} ${r.on ? 'on' : 'off'}`).join(' | ')} |`,
    `| --- | --- | ${runs.map(() => '---').join(' | ')} |`,
  ];
  for (const w of report.workloads) {
    const t = w.tfjs;
    const base = t === undefined || isFailed(t) ? undefined : t.ms;
    const cells = runs.map((r) => {
      const x = r.results[w.workload.name];
      if (x === undefined) return '–';
      if (isFailed(x)) return `failed: ${x.error.slice(0, 40)}`;
      return base === undefined
        ? x.ms.toFixed(1)
        : `${x.ms.toFixed(1)} (${(x.ms / base).toFixed(2)})`;
    });
    lines.push(
      `| ${w.workload.name} | ${base === undefined ? '–' : base.toFixed(1)} | ${cells.join(' | ')} |`,
    );
  }
  return lines;
}
