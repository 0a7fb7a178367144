/**
 * A GGUF (version 3) writer: the file format llama.cpp loads. Layout, as `ggml/include/gguf.h`
 * in llama.cpp describes it: the magic `GGUF`, `u32` version, `i64` tensor count, `i64` key/value
 * count; the key/value pairs (`string` key, `i32` type, value); the tensor infos (`string` name,
 * `u32` n_dims, `i64` ne[n_dims], `i32` ggml type, `u64` offset into the data section); padding to
 * the alignment; then the tensor data, each tensor starting at a multiple of the alignment.
 * Strings are a `u64` byte length and UTF-8 bytes; everything is little-endian.
 *
 * Dimensions are in ggml order (`ne[0]` is the fastest-varying), the reverse of a row-major
 * shape: a Hugging Face `[out, in]` matrix is `ne = [in, out]` with the same bytes.
 */
import { open } from 'node:fs/promises';
import { InvalidInputError } from '@agentrl/core';
import { f32ToBf16, f32ToF16 } from '@agentrl/core/checkpoint';

/** The tensor element types this writer emits (ggml type ids 0, 1 and 30). */
export type GgufTensorType = 'F32' | 'F16' | 'BF16';

const GGML_TYPE: Record<GgufTensorType, number> = { F32: 0, F16: 1, BF16: 30 };
const ELEMENT_BYTES: Record<GgufTensorType, number> = { F32: 4, F16: 2, BF16: 2 };

/** One typed metadata value. */
export type GgufValue =
  | { readonly type: 'u32'; readonly value: number }
  | { readonly type: 'i32'; readonly value: number }
  | { readonly type: 'f32'; readonly value: number }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'string[]'; readonly value: readonly string[] }
  | { readonly type: 'i32[]'; readonly value: ArrayLike<number> }
  | { readonly type: 'f32[]'; readonly value: ArrayLike<number> };

/** One tensor to write: ggml-order dimensions and float32 values converted to `type`. */
export interface GgufTensor {
  readonly name: string;
  /** ggml `ne`: the reverse of the row-major shape. */
  readonly dims: readonly number[];
  readonly type: GgufTensorType;
  readonly data: Float32Array;
}

/** Everything a GGUF file holds. */
export interface GgufContents {
  /** Key/value metadata, written in this order. */
  readonly metadata: readonly (readonly [string, GgufValue])[];
  readonly tensors: readonly GgufTensor[];
  /** Data alignment in bytes (a power of two); default 32, llama.cpp's `GGUF_DEFAULT_ALIGNMENT`. */
  readonly alignment?: number;
}

// GGUF key/value type ids (gguf.h `enum gguf_type`).
const KV = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;

/** Grows as values are appended; little-endian throughout. */
class ByteSink {
  #buf = Buffer.alloc(1 << 16);
  #len = 0;

  #reserve(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const next = Buffer.alloc(Math.max(this.#buf.length * 2, this.#len + n));
    this.#buf.copy(next, 0, 0, this.#len);
    this.#buf = next;
  }
  u32(v: number): void {
    this.#reserve(4);
    this.#len = this.#buf.writeUInt32LE(v, this.#len);
  }
  i32(v: number): void {
    this.#reserve(4);
    this.#len = this.#buf.writeInt32LE(v, this.#len);
  }
  f32(v: number): void {
    this.#reserve(4);
    this.#len = this.#buf.writeFloatLE(v, this.#len);
  }
  u64(v: number): void {
    this.#reserve(8);
    this.#len = this.#buf.writeBigUInt64LE(BigInt(v), this.#len);
  }
  u8(v: number): void {
    this.#reserve(1);
    this.#len = this.#buf.writeUInt8(v, this.#len);
  }
  string(s: string): void {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.#reserve(bytes.length);
    bytes.copy(this.#buf, this.#len);
    this.#len += bytes.length;
  }
  padTo(alignment: number): void {
    const pad = (alignment - (this.#len % alignment)) % alignment;
    this.#reserve(pad);
    this.#buf.fill(0, this.#len, this.#len + pad);
    this.#len += pad;
  }
  get bytes(): Buffer {
    return this.#buf.subarray(0, this.#len);
  }
}

function writeValue(sink: ByteSink, key: string, v: GgufValue): void {
  switch (v.type) {
    case 'u32':
      if (!Number.isInteger(v.value) || v.value < 0 || v.value > 0xffffffff)
        throw new InvalidInputError(`GGUF metadata ${key}: ${v.value} is not a u32`);
      sink.u32(KV.u32);
      sink.u32(v.value);
      return;
    case 'i32':
      sink.u32(KV.i32);
      sink.i32(v.value);
      return;
    case 'f32':
      sink.u32(KV.f32);
      sink.f32(v.value);
      return;
    case 'bool':
      sink.u32(KV.bool);
      sink.u8(v.value ? 1 : 0);
      return;
    case 'string':
      sink.u32(KV.string);
      sink.string(v.value);
      return;
    case 'string[]':
      sink.u32(KV.array);
      sink.u32(KV.string);
      sink.u64(v.value.length);
      for (const s of v.value) sink.string(s);
      return;
    case 'i32[]':
      sink.u32(KV.array);
      sink.u32(KV.i32);
      sink.u64(v.value.length);
      for (let i = 0; i < v.value.length; i++) sink.i32(v.value[i] as number);
      return;
    case 'f32[]':
      sink.u32(KV.array);
      sink.u32(KV.f32);
      sink.u64(v.value.length);
      for (let i = 0; i < v.value.length; i++) sink.f32(v.value[i] as number);
      return;
  }
}

/** The bytes of one tensor in its GGUF element type. */
export function encodeTensorData(type: GgufTensorType, data: Float32Array): Uint8Array {
  if (type === 'F32') return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const u16 = type === 'F16' ? f32ToF16(data) : f32ToBf16(data);
  return new Uint8Array(u16.buffer, u16.byteOffset, u16.byteLength);
}

function checkTensor(t: GgufTensor): number {
  const count = t.dims.reduce((a, b) => a * b, 1);
  if (t.dims.length === 0 || t.dims.some((d) => !Number.isInteger(d) || d <= 0)) {
    throw new InvalidInputError(
      `GGUF tensor ${t.name}: dims ${JSON.stringify(t.dims)} must be positive integers`,
      { details: { name: t.name, dims: t.dims } },
    );
  }
  if (count !== t.data.length) {
    throw new InvalidInputError(
      `GGUF tensor ${t.name}: dims ${JSON.stringify(t.dims)} hold ${count} values but the data has ${t.data.length}`,
      { details: { name: t.name, dims: t.dims, length: t.data.length } },
    );
  }
  return count * ELEMENT_BYTES[t.type];
}

/**
 * Writes `contents` to `path` as GGUF v3. Tensor data is converted and written one tensor at a
 * time, so the file is never held in memory whole.
 */
export async function writeGguf(path: string, contents: GgufContents): Promise<void> {
  const alignment = contents.alignment ?? 32;
  if (!Number.isInteger(alignment) || alignment <= 0 || (alignment & (alignment - 1)) !== 0) {
    throw new InvalidInputError(
      `writeGguf: alignment ${alignment} must be a power of two (llama.cpp refuses others)`,
      { details: { field: 'alignment', value: alignment } },
    );
  }
  const metadata = [...contents.metadata];
  if (!metadata.some(([k]) => k === 'general.alignment') && alignment !== 32) {
    metadata.push(['general.alignment', { type: 'u32', value: alignment }]);
  }
  const keys = new Set<string>();
  for (const [k] of metadata) {
    if (keys.has(k)) throw new InvalidInputError(`writeGguf: metadata key ${k} appears twice`);
    keys.add(k);
  }
  const names = new Set<string>();
  const header = new ByteSink();
  header.u32(0x46554747); // "GGUF" read as a little-endian u32
  header.u32(3);
  header.u64(contents.tensors.length);
  header.u64(metadata.length);
  for (const [key, value] of metadata) {
    header.string(key);
    writeValue(header, key, value);
  }
  // Offsets are relative to the data section and must be exactly the running padded sizes.
  let offset = 0;
  const sizes: number[] = [];
  for (const t of contents.tensors) {
    if (names.has(t.name)) throw new InvalidInputError(`writeGguf: tensor ${t.name} appears twice`);
    names.add(t.name);
    const size = checkTensor(t);
    sizes.push(size);
    header.string(t.name);
    header.u32(t.dims.length);
    for (const d of t.dims) header.u64(d);
    header.u32(GGML_TYPE[t.type]);
    header.u64(offset);
    offset += size + ((alignment - (size % alignment)) % alignment);
  }
  header.padTo(alignment);

  const file = await open(path, 'w');
  try {
    await file.write(header.bytes);
    const zeros = new Uint8Array(alignment);
    for (const [i, t] of contents.tensors.entries()) {
      await file.write(encodeTensorData(t.type, t.data));
      const size = sizes[i] as number;
      const pad = (alignment - (size % alignment)) % alignment;
      if (pad > 0) await file.write(zeros, 0, pad);
    }
  } finally {
    await file.close();
  }
}
