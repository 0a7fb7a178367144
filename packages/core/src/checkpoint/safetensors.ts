/**
 * A minimal safetensors reader and writer (the format of Hugging Face's `safetensors`): an 8-byte
 * little-endian header length, a JSON header with offsets relative to the data section, then raw
 * little-endian row-major bytes. Tensors are handed out as float32 (Node 20 has no 16-bit float
 * array, and the tensor libraries that read them compute in float32); the stored dtype is kept so
 * that a save in the same dtype reproduces the file bit for bit.
 */
import { open, readFile, writeFile } from 'node:fs/promises';
import { DataError, InvalidInputError } from '../errors.ts';
import type { FloatDType } from './config.ts';
import { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16 } from './dtype.ts';

/** One tensor read from (or to be written to) a safetensors file. */
export interface NamedTensor {
  readonly dtype: FloatDType;
  readonly shape: readonly number[];
  /** Values as float32, row-major. */
  readonly data: Float32Array;
}

const BYTES: Record<FloatDType, number> = { BF16: 2, F16: 2, F32: 4 };

function isFloatDType(value: unknown): value is FloatDType {
  return value === 'BF16' || value === 'F16' || value === 'F32';
}

function decode(dtype: FloatDType, bytes: Uint8Array): Float32Array {
  // Copy first: the slice may not be aligned for a typed-array view.
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  if (dtype === 'F32') return new Float32Array(copy.buffer);
  const u16 = new Uint16Array(copy.buffer);
  return dtype === 'BF16' ? bf16ToF32(u16) : f16ToF32(u16);
}

function encode(dtype: FloatDType, data: Float32Array): Uint8Array {
  if (dtype === 'F32')
    return new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
  const u16 = dtype === 'BF16' ? f32ToBf16(data) : f32ToF16(data);
  return new Uint8Array(u16.buffer);
}

/** Parses one safetensors file into float32 tensors, keyed by name. */
export async function readSafetensors(path: string): Promise<Map<string, NamedTensor>> {
  return (await readSafetensorsFile(path)).tensors;
}

/** Parses one safetensors file: its tensors (float32, keyed by name) and its string metadata. */
export async function readSafetensorsFile(
  path: string,
): Promise<{ tensors: Map<string, NamedTensor>; metadata: Record<string, string> }> {
  const handle = await open(path, 'r');
  try {
    const lengthBytes = Buffer.alloc(8);
    await handle.read(lengthBytes, 0, 8, 0);
    const headerLength = Number(lengthBytes.readBigUInt64LE(0));
    const { size } = await handle.stat();
    if (headerLength <= 0 || 8 + headerLength > size) {
      throw new DataError(
        `${path}: header length ${headerLength} does not fit a ${size}-byte file; the file is not safetensors or is truncated`,
        { details: { path } },
      );
    }
    const headerBytes = Buffer.alloc(headerLength);
    await handle.read(headerBytes, 0, headerLength, 8);
    let header: unknown;
    try {
      header = JSON.parse(headerBytes.toString('utf8'));
    } catch (cause) {
      throw new DataError(`${path}: the safetensors header is not valid JSON`, {
        cause,
        details: { path },
      });
    }
    if (typeof header !== 'object' || header === null) {
      throw new DataError(`${path}: the safetensors header is not a JSON object`, {
        details: { path },
      });
    }
    const dataStart = 8 + headerLength;
    const out = new Map<string, NamedTensor>();
    const metadata: Record<string, string> = {};
    for (const [name, entry] of Object.entries(header)) {
      if (name === '__metadata__') {
        if (typeof entry === 'object' && entry !== null) {
          for (const [k, v] of Object.entries(entry)) {
            if (typeof v === 'string') setOwn(metadata, k, v);
          }
        }
        continue;
      }
      const e = entry as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
      if (!isFloatDType(e.dtype)) {
        throw new DataError(
          `${path}: tensor ${name} has dtype ${String(e.dtype)}; only BF16, F16 and F32 are supported for model weights`,
          { details: { path, name } },
        );
      }
      const shape = e.shape;
      const offsets = e.data_offsets;
      if (
        !Array.isArray(shape) ||
        !shape.every((d) => Number.isInteger(d) && d >= 0) ||
        !Array.isArray(offsets) ||
        offsets.length !== 2
      ) {
        throw new DataError(`${path}: tensor ${name} has a malformed shape or data_offsets`, {
          details: { path, name },
        });
      }
      const [begin, end] = offsets as [number, number];
      const count = (shape as number[]).reduce((a, b) => a * b, 1);
      if (end - begin !== count * BYTES[e.dtype] || dataStart + end > size) {
        throw new DataError(
          `${path}: tensor ${name} spans bytes [${begin}, ${end}) which does not match shape [${shape.join(', ')}] of ${e.dtype} or the file size`,
          { details: { path, name } },
        );
      }
      const bytes = Buffer.alloc(end - begin);
      await handle.read(bytes, 0, end - begin, dataStart + begin);
      out.set(name, { dtype: e.dtype, shape: shape as number[], data: decode(e.dtype, bytes) });
    }
    return { tensors: out, metadata };
  } finally {
    await handle.close();
  }
}

/**
 * {@link readSafetensorsFile} for a file a checkpoint needs: a missing file becomes a `DataError`
 * naming it, with `whenMissing` saying what to do; other errors pass through.
 */
export async function readRequiredSafetensorsFile(
  path: string,
  whenMissing: string,
): Promise<Awaited<ReturnType<typeof readSafetensorsFile>>> {
  try {
    return await readSafetensorsFile(path);
  } catch (cause) {
    if (cause instanceof Error && 'code' in cause && cause.code === 'ENOENT') {
      throw new DataError(`${path} does not exist${whenMissing}`, { cause, details: { path } });
    }
    throw cause;
  }
}

/**
 * Sets `record[key]` as an own property whatever the key: a tensor or metadata entry may be named
 * `__proto__`, which plain assignment would take as the object's prototype and drop.
 */
function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/**
 * Serialises tensors (in the given order) as one safetensors buffer; the metadata is
 * `{"format": "pt"}` plus the given string entries.
 */
export function encodeSafetensors(
  tensors: ReadonlyMap<string, NamedTensor>,
  metadata: Readonly<Record<string, string>> = {},
): Buffer {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt', ...metadata } };
  const chunks: Uint8Array[] = [];
  let offset = 0;
  for (const [name, t] of tensors) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length) {
      throw new InvalidInputError(
        `tensor ${name}: shape [${t.shape.join(', ')}] holds ${count} values but data has ${t.data.length}`,
        { details: { name } },
      );
    }
    const bytes = encode(t.dtype, t.data);
    setOwn(header, name, {
      dtype: t.dtype,
      shape: t.shape,
      data_offsets: [offset, offset + bytes.length],
    });
    chunks.push(bytes);
    offset += bytes.length;
  }
  let json = JSON.stringify(header);
  // Pad with spaces so the data section starts 8-byte aligned.
  json += ' '.repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8);
  const headerBytes = Buffer.from(json, 'utf8');
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(headerBytes.length), 0);
  return Buffer.concat([length, headerBytes, ...chunks]);
}

/** Writes tensors to a safetensors file. */
export async function writeSafetensors(
  path: string,
  tensors: ReadonlyMap<string, NamedTensor>,
): Promise<void> {
  await writeFile(path, encodeSafetensors(tensors));
}

/** Byte size of a tensor when stored. */
export function storedByteSize(t: NamedTensor): number {
  return t.data.length * BYTES[t.dtype];
}

/** Reads `model.safetensors`, or every shard named by `model.safetensors.index.json`. */
export async function readCheckpointTensors(dir: string): Promise<Map<string, NamedTensor>> {
  const single = `${dir}/model.safetensors`;
  try {
    return await readSafetensors(single);
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'ENOENT')) throw error;
  }
  const indexPath = `${dir}/model.safetensors.index.json`;
  let index: unknown;
  try {
    index = JSON.parse(await readFile(indexPath, 'utf8'));
  } catch (cause) {
    throw new DataError(
      `${dir}: neither model.safetensors nor a readable model.safetensors.index.json is present; point it at a Hugging Face model folder (config.json with model.safetensors or its shards)`,
      { cause, details: { dir } },
    );
  }
  const weightMap = (index as { weight_map?: unknown }).weight_map;
  if (typeof weightMap !== 'object' || weightMap === null) {
    throw new DataError(`${indexPath}: missing "weight_map"`, { details: { path: indexPath } });
  }
  const files = [
    ...new Set(Object.values(weightMap as Record<string, unknown>).map(String)),
  ].sort();
  const out = new Map<string, NamedTensor>();
  for (const file of files) {
    for (const [name, t] of await readSafetensors(`${dir}/${file}`)) out.set(name, t);
  }
  return out;
}
