/**
 * Dispatches per train step, LoRA step and decode step of @agentrl/model-tfjs on webgpu at the
 * Qwen2.5 depths, with one decoder layer's share by kernel (see dispatch-count.ts). Runs on any
 * adapter, software Vulkan included: the counts do not depend on the device.
 *
 *   node --conditions=@agentrl/source src/dispatches.ts [--only qwen2.5-0.5b,...]
 *     [--fused-off all|NAME,...] [--precision f32|mixed] [--json out.json]
 */
import { writeFileSync } from 'node:fs';
import { FUSED_KERNEL_NAMES, type FusedKernelsOption, selectBackend } from '@agentrl/model-tfjs';
import { COUNT_SETUP, COUNT_SHAPES, countSteps, type StepCounts } from './dispatch-count.ts';

const argv = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const only = arg('only')?.split(',');
const offArg = arg('fused-off');
const off = offArg === 'all' ? [...FUSED_KERNEL_NAMES] : (offArg?.split(',') ?? []);
const unknown = off.filter((n) => !(FUSED_KERNEL_NAMES as readonly string[]).includes(n));
if (unknown.length > 0) {
  process.stderr.write(
    `--fused-off: unknown fused kernel ${unknown.join(', ')}; names: all, ${FUSED_KERNEL_NAMES.join(', ')}\n`,
  );
  process.exit(2);
}
const precision = arg('precision') ?? 'f32';
if (precision !== 'f32' && precision !== 'mixed') {
  process.stderr.write(`--precision must be f32 or mixed, got ${precision}\n`);
  process.exit(2);
}
const fusedKernels: FusedKernelsOption | undefined =
  off.length === 0 ? undefined : Object.fromEntries(off.map((n) => [n, false]));

await selectBackend({ backend: 'webgpu' });
const results: StepCounts[] = [];
for (const shape of COUNT_SHAPES.filter((s) => only === undefined || only.includes(s.name))) {
  const r = await countSteps(shape, fusedKernels, precision);
  results.push(r);
  const perLayer = (counts: Record<string, number>) =>
    Object.values(counts).reduce((a, b) => a + b, 0);
  console.log(
    `${r.shape} (${r.layers} layers): train step ${r.train.total} (${perLayer(r.trainPerLayer)} a layer), LoRA step ${r.lora.total} (${perLayer(r.loraPerLayer)} a layer), decode step ${r.decode.total} (${perLayer(r.decodePerLayer)} a layer)`,
  );
  for (const [label, counts] of [
    ['train', r.trainPerLayer],
    ['LoRA', r.loraPerLayer],
    ['decode', r.decodePerLayer],
  ] as const) {
    console.log(`  one layer of a ${label} step:`);
    for (const [kernel, n] of Object.entries(counts))
      console.log(`    ${String(n).padStart(4)}  ${kernel}`);
  }
}
const json = arg('json');
if (json !== undefined) {
  writeFileSync(
    json,
    `${JSON.stringify({ setup: COUNT_SETUP, fusedOff: off, precision, results }, null, 2)}\n`,
  );
}
