/**
 * The options of `LlamaCppEngine.create`, and their schema with defaults for run configs.
 */
import type { OptionsSchema } from '@agentrl/core';
import type { GgufConversionOptions } from './convert.ts';

/** The optional logger the engine reports to; it never prints on its own. */
export interface EngineLogger {
  info?(message: string, details?: Readonly<Record<string, unknown>>): void;
  warn?(message: string, details?: Readonly<Record<string, unknown>>): void;
}

/** Where llama.cpp runs: the CPU build, or a GPU build shipped by node-llama-cpp. */
export type LlamaCppDevice = 'cpu' | 'cuda' | 'vulkan' | 'metal';

/** Options of `LlamaCppEngine.create`. */
export interface LlamaCppEngineOptions {
  /** Default `'cpu'`. A GPU build must be installed and usable, or `create` fails naming the fix. */
  readonly device?: LlamaCppDevice;
  /** Prompts decoded in parallel in one llama.cpp batch (context sequences). Default 8. */
  readonly parallelSequences?: number;
  /** Tokens one sequence holds: the longest prompt plus `maxNewTokens`. Default 2048. */
  readonly contextSize?: number;
  /** CPU threads; default node-llama-cpp's choice (the machine's math cores). */
  readonly threads?: number;
  /**
   * KV cache element type. `'F16'` (default) is llama.cpp's default; `'F32'` with
   * `flashAttention: false` brings the logits to within about 1e-6 of a float64 forward pass.
   */
  readonly kvCacheType?: 'F16' | 'F32';
  /** Default `'auto'` (llama.cpp decides per device). */
  readonly flashAttention?: boolean | 'auto';
  /** Report each sampled token's log-prob. Default true. */
  readonly logProbs?: boolean;
  /**
   * Reuse prompt prefixes already in the KV cache (a sequence's previous prompt and response, or
   * another prompt of the same call, copied). Default true. The cache is emptied by every weight
   * sync, so a reused prefix was always computed by the current weights.
   */
  readonly prefixReuse?: boolean;
  /**
   * A synced checkpoint that is a model-tfjs LoRA checkpoint (`lora.safetensors` and
   * `lora-base.json` beside the merged weights): `'adapter'` (default) loads its base once and
   * syncs only the adapters; `'merged'` loads the merged weights saved with them.
   */
  readonly loraSync?: 'adapter' | 'merged';
  /** How synced checkpoints are written as GGUF (matrix type, token strings). */
  readonly gguf?: GgufConversionOptions;
  /** Folder for the GGUF files; default a fresh temporary folder, removed by `close`. */
  readonly workDir?: string;
  readonly logger?: EngineLogger;
}

/** The keys of {@link LlamaCppEngineOptions} a run config may set, with their defaults. */
export const LLAMACPP_ENGINE_OPTIONS: OptionsSchema = {
  device: {
    description: "where llama.cpp runs: 'cpu', 'cuda', 'vulkan' or 'metal'",
    default: 'cpu',
  },
  parallelSequences: {
    description: 'prompts decoded in parallel in one llama.cpp batch (context sequences)',
    default: 8,
  },
  contextSize: {
    description: 'tokens one sequence holds: the longest prompt plus maxNewTokens',
    default: 2048,
  },
  threads: {
    description: 'CPU threads (on a machine shared with other jobs, 1 avoids spinning threads)',
    default: "node-llama-cpp's choice",
  },
  kvCacheType: { description: "KV cache element type, 'F16' or 'F32'", default: 'F16' },
  flashAttention: { description: "true, false or 'auto'", default: 'auto' },
  logProbs: { description: "report each sampled token's log-prob", default: true },
  prefixReuse: {
    description:
      'reuse prompt prefixes already in the KV cache (previous turns, or other prompts of the call)',
    default: true,
  },
  loraSync: {
    description:
      "for a LoRA run's checkpoint: 'adapter' syncs the adapters on the base loaded once, 'merged' the merged weights",
    default: 'adapter',
  },
  gguf: {
    description: 'how synced checkpoints are written as GGUF',
    default: {},
    options: {
      type: { description: "matrix element type: 'F32', 'F16' or 'BF16'", default: 'F32' },
      tokens: { description: 'token strings by id, for display in llama.cpp tools' },
      name: { description: 'general.name of the GGUF', default: 'agentrl checkpoint' },
    },
  },
  workDir: { description: 'folder for the GGUF files', default: 'a temporary folder' },
};
