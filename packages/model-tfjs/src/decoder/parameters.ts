/**
 * The Hugging Face parameter set of a Qwen2 / Llama decoder. Linear weights are stored
 * `[out, in]` in checkpoints and held `[in, out]` in memory (`transposed: true`), so that every
 * forward and backward matmul is untransposed (a transposed operand is 10-13x slower on wasm).
 */
import type { CausalLMConfig } from '@agentrl/core/checkpoint';

/** One parameter: its HF name and checkpoint shape, and how a fresh model initialises it. */
export interface ParameterSpec {
  readonly name: string;
  /** Shape in the checkpoint (HF layout). */
  readonly shape: readonly [number] | readonly [number, number];
  /** Held `[in, out]` in memory (a linear weight). */
  readonly transposed: boolean;
  readonly init: 'normal' | 'zeros' | 'ones';
}

/** Every parameter the model uses, in checkpoint order; no `lm_head.weight` when tied. */
export function parameterSpecs(config: CausalLMConfig): ParameterSpec[] {
  const {
    hiddenSize: H,
    intermediateSize: I,
    numAttentionHeads: nh,
    numKeyValueHeads: nkv,
    headDim: d,
    vocabSize: V,
  } = config;
  const specs: ParameterSpec[] = [
    { name: 'model.embed_tokens.weight', shape: [V, H], transposed: false, init: 'normal' },
  ];
  const linear = (name: string, out: number, inp: number, bias: boolean): void => {
    specs.push({ name: `${name}.weight`, shape: [out, inp], transposed: true, init: 'normal' });
    if (bias) specs.push({ name: `${name}.bias`, shape: [out], transposed: false, init: 'zeros' });
  };
  for (let l = 0; l < config.numHiddenLayers; l++) {
    const p = `model.layers.${l}`;
    specs.push({
      name: `${p}.input_layernorm.weight`,
      shape: [H],
      transposed: false,
      init: 'ones',
    });
    linear(`${p}.self_attn.q_proj`, nh * d, H, config.attentionBias);
    linear(`${p}.self_attn.k_proj`, nkv * d, H, config.attentionBias);
    linear(`${p}.self_attn.v_proj`, nkv * d, H, config.attentionBias);
    linear(`${p}.self_attn.o_proj`, H, nh * d, config.outputBias);
    specs.push({
      name: `${p}.post_attention_layernorm.weight`,
      shape: [H],
      transposed: false,
      init: 'ones',
    });
    linear(`${p}.mlp.gate_proj`, I, H, config.mlpBias);
    linear(`${p}.mlp.up_proj`, I, H, config.mlpBias);
    linear(`${p}.mlp.down_proj`, H, I, config.mlpBias);
  }
  specs.push({ name: 'model.norm.weight', shape: [H], transposed: false, init: 'ones' });
  if (!config.tieWordEmbeddings)
    specs.push({ name: 'lm_head.weight', shape: [V, H], transposed: true, init: 'normal' });
  return specs;
}

/** Checkpoint keys that may be present and are ignored (e.g. rotary `inv_freq` buffers). */
export function isIgnorableKey(name: string, config: CausalLMConfig): boolean {
  return (
    name.endsWith('rotary_emb.inv_freq') || (config.tieWordEmbeddings && name === 'lm_head.weight')
  );
}

/** Transposes a row-major `[rows, cols]` matrix. */
export function transpose2d(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    for (let c = 0; c < cols; c++) out[c * rows + r] = data[base + c] as number;
  }
  return out;
}
