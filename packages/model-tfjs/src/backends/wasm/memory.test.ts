import { isAgentRLError } from '@agentrl/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createCausalLM } from '../../model/load.ts';
import { selectBackend } from '../select.ts';
import { WASM_HEAP_BYTES } from '../switches.ts';
import { isWasmHeapFailure, WasmMemoryError, wasmHeapFailure } from './memory.ts';

const small = {
  vocab_size: 32,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  tie_word_embeddings: true,
};

// Each set-up states its switches: this one restores the default heap size.
afterEach(async () => {
  await selectBackend({ backend: 'wasm' });
});

describe('the wasm heap limit', () => {
  it('refuses a model whose weights exceed 4 GiB before drawing or reading any weight', async () => {
    // 1,000,000 × 1,152 embedding: 4.6 GB of float32, drawn one value at a time it would take
    // a minute and 4.6 GB of JS memory; the refusal comes first.
    const started = performance.now();
    const load = createCausalLM(
      { ...small, vocab_size: 1_000_000, hidden_size: 1152, num_attention_heads: 8 },
      { seed: 0, backend: 'wasm' },
    );
    await expect(load).rejects.toThrow(WasmMemoryError);
    await expect(load).rejects.toThrow(/4\.00 GiB, the wasm32 maximum\); the webgpu backend/);
    expect(performance.now() - started).toBeLessThan(5000);
    const error = await load.catch((e: unknown) => e);
    expect(isAgentRLError(error, 'BACKEND_FAILURE')).toBe(true);
    expect((error as WasmMemoryError).details).toMatchObject({ limitBytes: WASM_HEAP_BYTES });
  });

  it('refuses a full train step that cannot fit and points at LoRA, which does fit', async () => {
    const model = await createCausalLM(small, { seed: 0, backend: 'wasm' });
    const weights = model.numParameters() * 4;
    // Room for the weights twice: a full step needs four times (gradients and two moments).
    await selectBackend({ backend: 'wasm', wasm: { heapBytes: 2 * weights } });
    const demo = [{ promptIds: [1, 2], responseIds: [3, 4] }];
    const before = await model.readWeight('model.norm.weight');
    await expect(model.sftStep(demo, { learningRate: 0.1 })).rejects.toThrow(
      /at least .* GiB on wasm .* train LoRA adapters instead/,
    );
    // Nothing was changed by the refused step.
    expect(await model.readWeight('model.norm.weight')).toEqual(before);
    model.enableLoRA({ rank: 2 });
    const r = await model.sftStep(demo, { learningRate: 0.1 });
    expect(r.skipped).toBe(false);
    model.dispose();
  });

  it('turns the engine’s out-of-bounds RuntimeError into a typed error that keeps the cause', () => {
    const { RuntimeError } = (
      globalThis as unknown as { WebAssembly: { RuntimeError: typeof Error } }
    ).WebAssembly;
    const raw = new RuntimeError('memory access out of bounds');
    expect(isWasmHeapFailure(raw)).toBe(true);
    expect(isWasmHeapFailure(new Error('memory access out of bounds'))).toBe(false);
    expect(isWasmHeapFailure(new RuntimeError('unreachable'))).toBe(false);
    // tfjs-backend-wasm's allocator aborts when it cannot grow the heap.
    expect(
      isWasmHeapFailure(new RuntimeError('Aborted(). Build with -sASSERTIONS for more info.')),
    ).toBe(true);
    const wrapped = wasmHeapFailure(raw, 3 * 2 ** 30);
    expect(wrapped.cause).toBe(raw);
    expect(wrapped.message).toMatch(/holding 3\.00 GiB in tensors.*microBatchSize.*restart/);
  });
});
