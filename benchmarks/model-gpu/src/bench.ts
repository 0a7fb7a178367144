/**
 * model-gpu: @agentrl/model-tfjs on the webgpu backend beside PyTorch fp32 on the same GPU, in one
 * run: one transformer block (batch 8 × 512, hidden 1024, 16 heads; forward, forward + backward), Qwen2.5-0.5B shapes (KV-cache
 * generation, a full AdamW step, a LoRA step) and Qwen2.5-1.5B shapes (a full AdamW step), with
 * GPU busy fraction, dispatches per step and peak memory. See README.md.
 *
 *   node --conditions=@agentrl/source src/bench.ts [--shapes full|tiny] [--python python3]
 *     [--sides tfjs,torch] [--only name,...] [--repeats n] [--json out.json]
 *     [--torch-device auto|cuda|cpu] [--no-kernel-time] [--exact-init] [--micro-batch n]
 *     [--fused-on all|NAME,...] [--fused-off all|NAME,...] [--ab-fused all|NAME,...]
 *     [--precision f32|mixed]
 *
 * From a pack (scripts/pack.sh): `gpu-run/bench.sh --shapes full --json results.json`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import {
  adapterName,
  backendInfo,
  DEFAULT_WEBGPU_SWITCHES,
  FUSED_KERNEL_NAMES,
  type FusedKernelsOption,
  selectBackend,
  webgpuAdapter,
  webgpuBindingLimit,
} from '@agentrl/model-tfjs';
import {
  type AbRun,
  type BenchReport,
  computeRatios,
  renderAb,
  renderPrecisions,
  renderProfiles,
  renderTable,
  TorchOutput,
} from './report.ts';
import { microBatchSize, type ShapeSet, type Workload, workloads } from './shapes.ts';
import { runTfjsWorkloads } from './tfjs-side.ts';

const argv = process.argv.slice(2);
function arg(name: string, fallback: string): string {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? (argv[i + 1] ?? fallback) : fallback;
}
const t0 = performance.now();
const say = (line: string) =>
  process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1)} s] ${line}\n`);

const shapesArg = arg('shapes', '');
if (shapesArg !== '' && shapesArg !== 'full' && shapesArg !== 'tiny') {
  say(`--shapes must be full or tiny, got ${shapesArg}`);
  process.exit(2);
}
const python = arg('python', 'python3');
const sides = new Set(arg('sides', 'tfjs,torch').split(','));
const only = arg('only', '');
const repeatsArg = arg('repeats', '');
const jsonOut = arg('json', '');
const torchDevice = arg('torch-device', 'auto');
const kernelTiming = !argv.includes('--no-kernel-time');
const init = argv.includes('--exact-init') ? 'exact' : 'tiled';

/** `all` or a comma list of fused kernel names (exits 2 naming the valid ones otherwise). */
function fusedNames(flag: string): string[] {
  const value = arg(flag, '');
  if (value === '') return [];
  const names = value === 'all' ? [...FUSED_KERNEL_NAMES] : value.split(',');
  const unknown = names.filter((n) => !(FUSED_KERNEL_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    say(
      `--${flag}: unknown fused kernel ${unknown.join(', ')}; names: all, ${FUSED_KERNEL_NAMES.join(', ')}`,
    );
    process.exit(2);
  }
  return names;
}
const fusedOn = fusedNames('fused-on');
const fusedOff = fusedNames('fused-off');
const abFused = fusedNames('ab-fused');
const both = fusedOn.filter((n) => fusedOff.includes(n));
if (both.length > 0) {
  say(`--fused-on and --fused-off both name ${both.join(', ')}`);
  process.exit(2);
}
/** Each fused kernel on or off in the main run: the model package's default unless named. */
const mainSwitches: Record<string, boolean> = { ...DEFAULT_WEBGPU_SWITCHES.fusedKernels };
for (const n of fusedOn) mainSwitches[n] = true;
for (const n of fusedOff) mainSwitches[n] = false;
const mainFused: FusedKernelsOption | undefined =
  fusedOn.length + fusedOff.length === 0 ? undefined : { ...mainSwitches };

const precisionArg = arg('precision', 'f32');
if (precisionArg !== 'f32' && precisionArg !== 'mixed') {
  say(`--precision must be f32 or mixed, got ${precisionArg}`);
  process.exit(2);
}
const precision: 'f32' | 'mixed' = precisionArg;

const microBatchArg = arg('micro-batch', '');
if (
  microBatchArg !== '' &&
  !(Number.isInteger(Number(microBatchArg)) && Number(microBatchArg) > 0)
) {
  say(`--micro-batch must be a positive integer, got ${microBatchArg}`);
  process.exit(2);
}
const smi = spawnSync(
  'nvidia-smi',
  ['--query-gpu=name,driver_version,memory.total', '--format=csv,noheader'],
  { encoding: 'utf8' },
);
const nvidiaSmi = smi.status === 0 ? smi.stdout.trim() : undefined;

// ---- webgpu first (cheap; tells early whether the tfjs side can run) ------------------------
let tfjsReady = false;
let webgpuInfo: unknown;
let gpuInfo: BenchReport['gpu'];
const notes: string[] = [];
if (sides.has('tfjs')) {
  try {
    await selectBackend({ backend: 'webgpu' });
    const adapter = webgpuAdapter();
    webgpuInfo = backendInfo();
    if (adapter !== undefined) {
      gpuInfo = {
        name: adapterName(adapter),
        driver: adapter.driver || 'not reported',
        software: adapter.software,
        ...(nvidiaSmi === undefined ? {} : { nvidiaSmi }),
      };
      if (adapter.software) {
        notes.push(
          `software WebGPU adapter (${adapter.driver || 'lavapipe/llvmpipe'}): the figures check the harness, they are not GPU performance`,
        );
      }
    }
    tfjsReady = true;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    webgpuInfo = { error: message };
    notes.push(`tfjs side skipped: ${message}`);
  }
}

// Shapes: full on a GPU; without a hardware adapter, tiny unless --shapes full is given (full
// shapes on software Vulkan take minutes a step, and `pnpm bench` runs this on every machine).
const hardware = gpuInfo !== undefined && !gpuInfo.software;
const set: ShapeSet = shapesArg === '' ? (hardware ? 'full' : 'tiny') : shapesArg;
if (shapesArg === '' && set === 'tiny') {
  notes.push(
    'no hardware WebGPU adapter: tiny shapes (a harness check); pass --shapes full to force',
  );
}
const repeats = Number(repeatsArg === '' ? (set === 'tiny' ? '2' : '3') : repeatsArg);
const all = workloads(set);
const chosen = only === '' ? all : all.filter((w) => only.split(',').includes(w.name));
if (chosen.length === 0) {
  say(`--only ${only} matches no workload; names: ${all.map((w) => w.name).join(', ')}`);
  process.exit(2);
}

// Training micro-batches, the same on both sides: the logits of one must fit a storage binding
// (the adapter's limit; an H100's 2 GiB - 4 when only PyTorch runs), or --micro-batch.
const bindingLimit = webgpuBindingLimit() ?? 2_147_483_644;
const selected: Workload[] = chosen.map((w) =>
  w.kind === 'train' || w.kind === 'lora'
    ? {
        ...w,
        microBatchSize:
          microBatchArg === '' ? microBatchSize(w, bindingLimit) : Number(microBatchArg),
      }
    : w,
);

const report: BenchReport = {
  startedAt: new Date().toISOString(),
  shapes: set,
  argv,
  machine: {
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: availableParallelism(),
  },
  ...(gpuInfo === undefined ? {} : { gpu: gpuInfo }),
  ...(webgpuInfo === undefined ? {} : { webgpu: webgpuInfo }),
  workloads: selected.map((workload) => ({ workload })),
  ...(fusedOn.length === 0 ? {} : { fusedOn }),
  ...(fusedOff.length === 0 ? {} : { fusedOff }),
  notes,
};
const save = () => {
  computeRatios(report);
  if (jsonOut !== '') writeFileSync(jsonOut, `${JSON.stringify(report, null, 2)}\n`);
};

// ---- PyTorch, in a child process that exits (and frees the GPU) before the tfjs side --------
// An interpreter without torch skips the PyTorch side (a note, not a failure): `pnpm bench` runs
// everywhere; a harness that starts and then fails is a failure.
let torchSkipped = false;
if (
  sides.has('torch') &&
  spawnSync(python, ['-c', 'import torch'], { stdio: 'ignore' }).status !== 0
) {
  torchSkipped = true;
  notes.push(
    `PyTorch side skipped: ${python} cannot import torch; pass --python with the interpreter that has it`,
  );
}
if (sides.has('torch') && !torchSkipped) {
  const harness = [
    new URL('./torch_harness.py', import.meta.url),
    new URL('../torch_harness.py', import.meta.url),
  ]
    .map((u) => fileURLToPath(u))
    .find((p) => existsSync(p));
  if (harness === undefined) {
    report.torch = { error: 'torch_harness.py not found beside the script or one level up' };
  } else {
    say(`torch: ${python} ${harness} (device ${torchDevice})`);
    const run = spawnSync(python, [harness], {
      input: JSON.stringify({ device: torchDevice, repeats, workloads: selected }),
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'inherit'],
      maxBuffer: 64 * 2 ** 20,
    });
    const parsed =
      run.status === 0 ? TorchOutput.safeParse(JSON.parse(run.stdout.trim())) : undefined;
    if (parsed?.success === true) {
      const { results, ...meta } = parsed.data;
      report.torch = meta;
      for (const w of report.workloads) {
        const r = results[w.workload.name];
        if (r !== undefined) w.torch = r;
      }
    } else {
      const why =
        parsed === undefined
          ? `exit ${run.status ?? run.signal ?? run.error?.message}`
          : `unexpected output: ${parsed.error.message.slice(0, 200)}`;
      report.torch = {
        error: `PyTorch harness failed (${why}); pass --python with an interpreter that has torch`,
      };
    }
  }
  save();
}

// ---- tfjs-webgpu ---------------------------------------------------------------------------
if (tfjsReady) {
  await runTfjsWorkloads(
    selected,
    {
      repeats,
      kernelTiming,
      init,
      precision,
      ...(mainFused === undefined ? {} : { fusedKernels: mainFused }),
      progress: say,
      logger: { info: (m: string) => say(`[model-tfjs] ${m}`), warn: (m: string) => say(m) },
    },
    (w, result) => {
      const entry = report.workloads.find((x) => x.workload === w);
      if (entry !== undefined) entry.tfjs = result;
      say(`tfjs: ${w.name}: ${'error' in result ? `failed: ${result.error}` : 'done'}`);
      save();
    },
  );
}

// ---- A/B: each named fused kernel flipped in turn (on <-> off; the others as in the main run) ---
if (tfjsReady && abFused.length > 0) {
  report.abFused = [];
  for (const kernel of abFused) {
    const on = !mainSwitches[kernel];
    const run: AbRun = { kernel, on, results: {} };
    report.abFused.push(run);
    await runTfjsWorkloads(
      selected,
      {
        repeats,
        kernelTiming: false,
        init,
        precision,
        fusedKernels: { ...mainSwitches, [kernel]: on },
        progress: (line) => say(`[${kernel} ${on ? 'on' : 'off'}] ${line}`),
      },
      (w, result) => {
        run.results[w.name] =
          'error' in result
            ? result
            : { ms: result.ms, kernelMs: result.kernelMs, peakPoolBytes: result.peakPoolBytes };
        save();
      },
    );
  }
}

report.finishedAt = new Date().toISOString();
save();
const gpu = report.gpu;
const torch = report.torch;
process.stdout.write(
  [
    `shapes: ${set}; GPU: ${gpu ? `${gpu.name} (driver ${gpu.driver})${gpu.software ? ' [software adapter]' : ''}` : 'no WebGPU adapter'}${nvidiaSmi ? `; nvidia-smi: ${nvidiaSmi}` : ''}`,
    `torch: ${torch === undefined ? 'not run' : 'error' in torch ? torch.error : `${torch.torch} on ${torch.deviceName} (CUDA ${torch.cuda ?? '–'}), fp32, attention ${torch.attention}`}`,
    `Node ${process.version}; median of ${repeats} after one warm-up; GPU busy = summed kernel time (timestamp queries, separate run) ÷ wall time`,
    '',
    renderTable(report),
    ...renderPrecisions(report),
    ...renderProfiles(report),
    ...renderAb(report),
    ...report.notes.map((n) => `note: ${n}`),
    '',
  ].join('\n'),
);
// Exit 1 when a requested side could not run or any workload failed (the table says which).
const failed =
  (sides.has('tfjs') && !tfjsReady) ||
  (report.abFused ?? []).some((r) => Object.values(r.results).some((x) => 'error' in x)) ||
  (torch !== undefined && 'error' in torch) ||
  report.workloads.some(
    (w) =>
      (w.tfjs !== undefined && 'error' in w.tfjs) || (w.torch !== undefined && 'error' in w.torch),
  );
process.exit(failed ? 1 : 0);
