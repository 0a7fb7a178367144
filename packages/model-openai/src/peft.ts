/**
 * LoRA adapters between the model package's layout and PEFT's, the folder vLLM's
 * `/v1/load_lora_adapter` loads (`adapter_config.json` + `adapter_model.safetensors`).
 *
 * `@agentrl/model-tfjs` saves `lora.safetensors` with `<hf weight>.lora_A` `[in, r]` and
 * `.lora_B` `[r, out]` (its `x·A·B` layout) and the rank and α in the metadata. PEFT names the
 * same factors `base_model.model.<hf weight>.lora_A.weight` `[r, in]` and `.lora_B.weight`
 * `[out, r]` (`x·Aᵀ·Bᵀ`), with `r` and `lora_alpha` in `adapter_config.json`: the tensors are
 * transposed, the scale α/r is the same.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DataError } from '@agentrl/core';

/** One F32 tensor of a safetensors file. */
export interface F32Tensor {
  readonly shape: readonly number[];
  readonly data: Float32Array;
}

/** Reads a safetensors file holding only F32 tensors, with its metadata. */
export async function readF32Safetensors(
  path: string,
): Promise<{ tensors: Map<string, F32Tensor>; metadata: Record<string, string> }> {
  const bytes = await readFile(path);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8')) as Record<
    string,
    { dtype: string; shape: number[]; data_offsets: [number, number] } | Record<string, string>
  >;
  const base = 8 + headerLength;
  const tensors = new Map<string, F32Tensor>();
  let metadata: Record<string, string> = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = entry as Record<string, string>;
      continue;
    }
    const t = entry as { dtype: string; shape: number[]; data_offsets: [number, number] };
    if (t.dtype !== 'F32')
      throw new DataError(
        `${path}: tensor ${name} is ${t.dtype}; only F32 LoRA factors are converted (save the adapters in F32)`,
        { details: { path, name, dtype: t.dtype } },
      );
    const [from, to] = t.data_offsets;
    const copy = new Uint8Array(bytes.subarray(base + from, base + to));
    tensors.set(name, { shape: t.shape, data: new Float32Array(copy.buffer) });
  }
  return { tensors, metadata };
}

/** Writes F32 tensors (in the given order) and string metadata as a safetensors file. */
export async function writeF32Safetensors(
  path: string,
  tensors: ReadonlyMap<string, F32Tensor>,
  metadata: Readonly<Record<string, string>> = {},
): Promise<void> {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const [name, t] of tensors) {
    const size = t.data.length * 4;
    header[name] = { dtype: 'F32', shape: [...t.shape], data_offsets: [offset, offset + size] };
    offset += size;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8);
  const headerBytes = Buffer.from(json, 'utf8');
  const out = Buffer.alloc(8 + headerBytes.length + offset);
  out.writeBigUInt64LE(BigInt(headerBytes.length), 0);
  headerBytes.copy(out, 8);
  let at = 8 + headerBytes.length;
  for (const t of tensors.values()) {
    Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).copy(out, at);
    at += t.data.byteLength;
  }
  await writeFile(path, out);
}

function transpose(t: F32Tensor): F32Tensor {
  const [rows, cols] = t.shape as [number, number];
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < cols; j++) data[j * rows + i] = t.data[i * cols + j] as number;
  return { shape: [cols, rows], data };
}

/** File names of a model-tfjs LoRA checkpoint and of a PEFT adapter folder. */
export const AGENTRL_LORA_FILE = 'lora.safetensors';
export const PEFT_CONFIG_FILE = 'adapter_config.json';
export const PEFT_WEIGHTS_FILE = 'adapter_model.safetensors';

const PEFT_PREFIX = 'base_model.model.';

/**
 * Writes the adapters of a model-tfjs LoRA checkpoint (`<checkpointDir>/lora.safetensors`) as a
 * PEFT adapter folder in `outDir` (which must exist). `baseModel` goes to
 * `base_model_name_or_path`.
 */
export async function loraToPeft(
  checkpointDir: string,
  outDir: string,
  baseModel = '',
): Promise<{ rank: number; alpha: number; targets: string[] }> {
  const path = join(checkpointDir, AGENTRL_LORA_FILE);
  const { tensors, metadata } = await readF32Safetensors(path);
  const rank = Number(metadata.rank);
  const alpha = Number(metadata.alpha);
  if (!Number.isInteger(rank) || rank <= 0 || !Number.isFinite(alpha))
    throw new DataError(
      `${path}: metadata rank ${JSON.stringify(metadata.rank)} / alpha ${JSON.stringify(metadata.alpha)} are not a LoRA rank and α; point at a folder a LoRA run saved`,
      { details: { path, field: 'rank' } },
    );
  const out = new Map<string, F32Tensor>();
  const targets = new Set<string>();
  for (const [name, t] of tensors) {
    const m = /^(.+)\.lora_([AB])$/.exec(name);
    if (m === null) continue;
    const weight = m[1] as string;
    targets.add(weight.split('.').at(-1) as string);
    out.set(`${PEFT_PREFIX}${weight}.lora_${m[2]}.weight`, transpose(t));
  }
  await writeF32Safetensors(join(outDir, PEFT_WEIGHTS_FILE), out);
  const config = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModel,
    r: rank,
    lora_alpha: alpha,
    lora_dropout: 0,
    bias: 'none',
    fan_in_fan_out: false,
    target_modules: [...targets].sort(),
  };
  await writeFile(join(outDir, PEFT_CONFIG_FILE), `${JSON.stringify(config, null, 2)}\n`);
  return { rank, alpha, targets: config.target_modules };
}

/**
 * Writes a PEFT adapter folder back as the model package's `lora.safetensors` in `outDir`
 * (factors transposed to `[in, r]` / `[r, out]`, rank and α in the metadata), the layout
 * `@agentrl/engine-llamacpp` converts to a GGUF adapter.
 */
export async function peftToLora(peftDir: string, outDir: string): Promise<void> {
  const configPath = join(peftDir, PEFT_CONFIG_FILE);
  let config: { r?: unknown; lora_alpha?: unknown; target_modules?: unknown };
  try {
    config = JSON.parse(await readFile(configPath, 'utf8')) as typeof config;
  } catch (cause) {
    throw new DataError(
      `${configPath} cannot be read as a PEFT adapter config (${cause instanceof Error ? cause.message : String(cause)}); point lora_path at a PEFT adapter folder`,
      { cause, details: { path: configPath } },
    );
  }
  const rank = Number(config.r);
  const alpha = Number(config.lora_alpha);
  const { tensors } = await readF32Safetensors(join(peftDir, PEFT_WEIGHTS_FILE));
  const out = new Map<string, F32Tensor>();
  for (const [name, t] of tensors) {
    const m = /^(?:base_model\.model\.)?(.+)\.lora_([AB])\.weight$/.exec(name);
    if (m === null) continue;
    out.set(`${m[1]}.lora_${m[2]}`, transpose(t));
  }
  await writeF32Safetensors(join(outDir, AGENTRL_LORA_FILE), out, {
    rank: String(rank),
    alpha: String(alpha),
    targets: JSON.stringify(config.target_modules ?? []),
  });
}
