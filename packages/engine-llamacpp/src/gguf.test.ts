import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bf16ToF32, f16ToF32 } from '@agentrl/core/checkpoint';
import fc from 'fast-check';
import { readGgufFileInfo } from 'node-llama-cpp';
import { afterAll, describe, expect, it } from 'vitest';
import { type GgufTensor, type GgufTensorType, writeGguf } from './gguf.ts';

const work = await mkdtemp(join(tmpdir(), 'engine-llamacpp-gguf-'));
afterAll(() => rm(work, { recursive: true, force: true }));

const GGML: Record<GgufTensorType, number> = { F32: 0, F16: 1, BF16: 30 };

function decode(type: GgufTensorType, bytes: Buffer): Float32Array {
  const copy = new Uint8Array(bytes);
  if (type === 'F32') return new Float32Array(copy.buffer);
  const u16 = new Uint16Array(copy.buffer);
  return type === 'F16' ? f16ToF32(u16) : bf16ToF32(u16);
}

const tensorArb = fc
  .record({
    dims: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 3 }),
    type: fc.constantFrom<GgufTensorType>('F32', 'F16', 'BF16'),
    seed: fc.integer(),
  })
  .map(({ dims, type, seed }) => {
    const n = dims.reduce((a, b) => a * b, 1);
    // Values exactly representable in every type, so the round trip is exact.
    const data = Float32Array.from({ length: n }, (_, i) => (((seed + i * 7) % 17) - 8) / 4);
    return { dims, type, data };
  });

let files = 0;

describe('writeGguf', () => {
  it('writes tensors that node-llama-cpp reads back at the offsets it computes, bytes intact', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(tensorArb, { minLength: 1, maxLength: 5 }),
        fc.constantFrom(32, 64),
        async (specs, alignment) => {
          const tensors: GgufTensor[] = specs.map((t, i) => ({ name: `t.${i}`, ...t }));
          const path = join(work, `p${files++}.gguf`);
          await writeGguf(path, {
            metadata: [['general.architecture', { type: 'string', value: 'llama' }]],
            tensors,
            alignment,
          });
          const info = await readGgufFileInfo(path, { logWarnings: false });
          const file = await readFile(path);
          expect(info.version).toBe(3);
          expect(info.tensorInfo).toHaveLength(tensors.length);
          for (const [i, t] of tensors.entries()) {
            const got = info.tensorInfo?.[i];
            expect(got?.name).toBe(t.name);
            expect(got?.dimensions.map(Number)).toEqual(t.dims);
            expect(got?.ggmlType).toBe(GGML[t.type]);
            const start = Number(got?.fileOffset);
            expect(start % alignment).toBe(0);
            const size = t.data.length * (t.type === 'F32' ? 4 : 2);
            expect(decode(t.type, file.subarray(start, start + size))).toEqual(t.data);
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('writes metadata of every type as node-llama-cpp reads it', async () => {
    const path = join(work, 'meta.gguf');
    await writeGguf(path, {
      metadata: [
        ['general.architecture', { type: 'string', value: 'qwen2' }],
        ['test.u32', { type: 'u32', value: 4_000_000_000 }],
        ['test.i32', { type: 'i32', value: -5 }],
        ['test.f32', { type: 'f32', value: 0.5 }],
        ['test.bool', { type: 'bool', value: true }],
        ['test.strings', { type: 'string[]', value: ['a', 'ü', ''] }],
        ['test.ints', { type: 'i32[]', value: Int32Array.from([1, -2, 3]) }],
        ['test.floats', { type: 'f32[]', value: [0.25, -1] }],
      ],
      tensors: [{ name: 'x', dims: [2], type: 'F32', data: Float32Array.from([1, 2]) }],
    });
    const info = await readGgufFileInfo(path, { logWarnings: false });
    const test = (info.metadata as unknown as { test: Record<string, unknown> }).test;
    expect(test).toEqual({
      u32: 4_000_000_000,
      i32: -5,
      f32: 0.5,
      bool: true,
      strings: ['a', 'ü', ''],
      ints: [1, -2, 3],
      floats: [0.25, -1],
    });
  });

  it('refuses data that does not fill the dims, repeated names and a non-power-of-two alignment', async () => {
    const path = join(work, 'bad.gguf');
    const x = { name: 'x', dims: [3], type: 'F32' as const, data: new Float32Array(2) };
    await expect(writeGguf(path, { metadata: [], tensors: [x] })).rejects.toThrow(
      /dims \[3\] hold 3 values but the data has 2/,
    );
    const y = { ...x, dims: [2] };
    await expect(writeGguf(path, { metadata: [], tensors: [y, y] })).rejects.toThrow(
      /tensor x appears twice/,
    );
    await expect(writeGguf(path, { metadata: [], tensors: [y], alignment: 24 })).rejects.toThrow(
      /alignment 24 must be a power of two/,
    );
  });
});
