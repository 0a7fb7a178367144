/**
 * LoRA adapters between the model package's layout and PEFT's, the folder vLLM's
 * `/v1/load_lora_adapter` loads (`adapter_config.json` + `adapter_model.safetensors`).
 *
 * `@agentrl/model-tfjs` saves `lora.safetensors` with `<hf weight>.lora_A` `[in, r]` and
 * `.lora_B` `[r, out]` (its `x·A·B` layout) and the rank and α in the metadata. PEFT names the
 * same factors `base_model.model.<hf weight>.lora_A.weight` `[r, in]` and `.lora_B.weight`
 * `[out, r]` (`x·Aᵀ·Bᵀ`), with `r` and `lora_alpha` in `adapter_config.json`: the tensors are
 * transposed, the scale α/r is the same. Both files go through `@agentrl/core/checkpoint`'s
 * safetensors reader and writer; factors stored as F16 or BF16 are read exactly and written as F32.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DataError } from '@agentrl/core';
import {
  encodeSafetensors,
  LORA_STATE_FILE,
  type NamedTensor,
  readSafetensorsFile,
} from '@agentrl/core/checkpoint';

/** A factor transposed, as F32 (what both layouts store; a 16-bit factor is widened exactly). */
function transpose(t: NamedTensor): NamedTensor {
  const [rows, cols] = t.shape as [number, number];
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < cols; j++) data[j * rows + i] = t.data[i * cols + j] as number;
  return { dtype: 'F32', shape: [cols, rows], data };
}

/** File names of a PEFT adapter folder (the LoRA checkpoint's are `@agentrl/core/checkpoint`'s). */
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
  const path = join(checkpointDir, LORA_STATE_FILE);
  const { tensors, metadata } = await readSafetensorsFile(path);
  const rank = Number(metadata.rank);
  const alpha = Number(metadata.alpha);
  if (!Number.isInteger(rank) || rank <= 0 || !Number.isFinite(alpha))
    throw new DataError(
      `${path}: metadata rank ${JSON.stringify(metadata.rank)} / alpha ${JSON.stringify(metadata.alpha)} are not a LoRA rank and α; point at a folder a LoRA run saved`,
      { details: { path, field: 'rank' } },
    );
  const out = new Map<string, NamedTensor>();
  const targets = new Set<string>();
  for (const [name, t] of tensors) {
    const m = /^(.+)\.lora_([AB])$/.exec(name);
    if (m === null) continue;
    const weight = m[1] as string;
    targets.add(weight.split('.').at(-1) as string);
    out.set(`${PEFT_PREFIX}${weight}.lora_${m[2]}.weight`, transpose(t));
  }
  await writeFile(join(outDir, PEFT_WEIGHTS_FILE), encodeSafetensors(out));
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
  const { tensors } = await readSafetensorsFile(join(peftDir, PEFT_WEIGHTS_FILE));
  const out = new Map<string, NamedTensor>();
  for (const [name, t] of tensors) {
    const m = /^(?:base_model\.model\.)?(.+)\.lora_([AB])\.weight$/.exec(name);
    if (m === null) continue;
    out.set(`${m[1]}.lora_${m[2]}`, transpose(t));
  }
  await writeFile(
    join(outDir, LORA_STATE_FILE),
    encodeSafetensors(out, {
      rank: String(rank),
      alpha: String(alpha),
      targets: JSON.stringify(config.target_modules ?? []),
    }),
  );
}
