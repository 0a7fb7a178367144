import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { isAgentRLError } from '../errors.ts';
import { fixturePath } from '../test/shared-data.ts';
import type { FloatDType } from './config.ts';
import { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16 } from './dtype.ts';
import {
  encodeSafetensors,
  type NamedTensor,
  readCheckpointTensors,
  readSafetensors,
  readSafetensorsFile,
  storedByteSize,
  writeSafetensors,
} from './safetensors.ts';

const fixtures = fixturePath();
/** The model folders among the fixtures (those holding a model.safetensors). */
const fixtureModels = readdirSync(fixtures).filter((name) =>
  existsSync(join(fixtures, name, 'model.safetensors')),
);

const work = await mkdtemp(join(tmpdir(), 'agentrl-checkpoint-'));
afterAll(() => rm(work, { recursive: true, force: true }));

/** What a value becomes when stored as `dtype`. */
function stored(dtype: FloatDType, data: Float32Array): Float32Array {
  if (dtype === 'F32') return data;
  return dtype === 'F16' ? f16ToF32(f32ToF16(data)) : bf16ToF32(f32ToBf16(data));
}

const tensorArb: fc.Arbitrary<NamedTensor> = fc
  .record({
    dtype: fc.constantFrom<FloatDType>('F32', 'F16', 'BF16'),
    shape: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }),
  })
  .chain(({ dtype, shape }) =>
    fc
      .array(fc.float({ noNaN: true }), {
        minLength: shape.reduce((a, b) => a * b, 1),
        maxLength: shape.reduce((a, b) => a * b, 1),
      })
      .map((values) => ({ dtype, shape, data: Float32Array.from(values) })),
  );

let files = 0;

describe('safetensors files', () => {
  it('read back every tensor with its dtype and shape, values rounded once to the stored dtype', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), tensorArb, { maxKeys: 5 }),
        fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 }),
        async (record, extra) => {
          const tensors = new Map(Object.entries(record));
          const path = join(work, `prop-${files++}.safetensors`);
          const bytes = encodeSafetensors(tensors, extra);
          await writeFile(path, bytes);
          const read = await readSafetensorsFile(path);
          expect([...read.tensors.keys()].sort()).toEqual([...tensors.keys()].sort());
          for (const [name, t] of tensors) {
            const back = read.tensors.get(name);
            expect(back?.dtype).toBe(t.dtype);
            expect(back?.shape).toEqual(t.shape);
            expect(back?.data).toEqual(stored(t.dtype, t.data));
          }
          expect(read.metadata).toEqual({ format: 'pt', ...extra });
          // The header is padded so that the data section starts 8-byte aligned.
          expect((8 + Number(bytes.readBigUInt64LE(0))) % 8).toBe(0);
          const dataBytes = [...tensors.values()].reduce((sum, t) => sum + storedByteSize(t), 0);
          expect(bytes.length).toBe(8 + Number(bytes.readBigUInt64LE(0)) + dataBytes);
        },
      ),
      {
        numRuns: 50,
        // A computed key makes `__proto__` an own property, as JSON.parse does: names a plain
        // assignment would drop must survive too.
        examples: [
          [
            { ['__proto__']: { dtype: 'F32', shape: [], data: Float32Array.of(0) } },
            { ['__proto__']: 'x', constructor: 'y' },
          ],
        ],
      },
    );
  });

  it.each(fixtureModels)(
    'rewrite the %s fixture in its own dtypes with the same values, bit for bit',
    async (name) => {
      const original = await readSafetensors(join(fixtures, name, 'model.safetensors'));
      expect(original.size).toBeGreaterThan(0);
      const copy = join(work, `${name}.safetensors`);
      await writeSafetensors(copy, original);
      const again = await readSafetensors(copy);
      for (const [key, t] of original) {
        const back = again.get(key);
        expect(back?.dtype).toBe(t.dtype);
        expect(back?.shape).toEqual(t.shape);
        expect(new Uint32Array(back?.data.buffer ?? new ArrayBuffer(0))).toEqual(
          new Uint32Array(t.data.buffer),
        );
      }
    },
  );

  it('refuse a truncated file and an integer tensor with BAD_DATA errors naming the file and tensor', async () => {
    const good = encodeSafetensors(
      new Map([['w', { dtype: 'F32', shape: [2], data: Float32Array.of(1, 2) }]]),
    );
    const truncated = join(work, 'truncated.safetensors');
    await writeFile(truncated, good.subarray(0, good.length - 4));
    await expect(readSafetensors(truncated)).rejects.toSatisfy(
      (e: unknown) => isAgentRLError(e, 'BAD_DATA') && e.message.includes('truncated.safetensors'),
    );
    const header = Buffer.from(
      JSON.stringify({ ids: { dtype: 'I64', shape: [1], data_offsets: [0, 8] } }),
    );
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(header.length));
    const ints = join(work, 'ints.safetensors');
    await writeFile(ints, Buffer.concat([length, header, Buffer.alloc(8)]));
    await expect(readSafetensors(ints)).rejects.toSatisfy(
      (e: unknown) => isAgentRLError(e, 'BAD_DATA') && /tensor ids has dtype I64/.test(e.message),
    );
  });

  it('refuse to encode a tensor whose data does not fill its shape, naming the tensor', () => {
    expect(() =>
      encodeSafetensors(
        new Map([['w', { dtype: 'F16', shape: [2, 2], data: new Float32Array(3) }]]),
      ),
    ).toThrow(/tensor w: shape \[2, 2\] holds 4 values but data has 3/);
  });
});

describe('readCheckpointTensors', () => {
  it('reads every shard a model.safetensors.index.json names, and a single model.safetensors', async () => {
    const a: NamedTensor = { dtype: 'BF16', shape: [2], data: Float32Array.of(0.5, -2) };
    const b: NamedTensor = { dtype: 'F32', shape: [1, 1], data: Float32Array.of(3) };
    const sharded = join(work, 'sharded');
    await mkdir(sharded);
    await writeSafetensors(join(sharded, 'model-00001-of-00002.safetensors'), new Map([['a', a]]));
    await writeSafetensors(join(sharded, 'model-00002-of-00002.safetensors'), new Map([['b', b]]));
    const weight_map = {
      a: 'model-00001-of-00002.safetensors',
      b: 'model-00002-of-00002.safetensors',
    };
    await writeFile(join(sharded, 'model.safetensors.index.json'), JSON.stringify({ weight_map }));
    const single = join(work, 'single');
    await mkdir(single);
    await writeSafetensors(
      join(single, 'model.safetensors'),
      new Map([
        ['a', a],
        ['b', b],
      ]),
    );
    for (const dir of [sharded, single]) {
      expect(await readCheckpointTensors(dir)).toEqual(
        new Map([
          ['a', a],
          ['b', b],
        ]),
      );
    }
  });

  it('names the folder when it holds neither model.safetensors nor an index', async () => {
    const empty = join(work, 'no-weights');
    await mkdir(empty);
    await expect(readCheckpointTensors(empty)).rejects.toSatisfy(
      (e: unknown) => isAgentRLError(e, 'BAD_DATA') && e.message.startsWith(`${empty}: neither`),
    );
    await writeFile(join(empty, 'model.safetensors.index.json'), '{}');
    await expect(readCheckpointTensors(empty)).rejects.toThrow(/missing "weight_map"/);
  });
});
