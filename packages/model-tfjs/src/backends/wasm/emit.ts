/**
 * A minimal WebAssembly binary writer for the kernels of the wasm backend (`gemm.ts`,
 * `adamw.ts`): LEB128 numbers, sections, and the few instructions the kernels use, SIMD
 * included. Modules are built as bytes at run time, so there is no toolchain and no binary in
 * the repository.
 */

/** The slice of the WebAssembly JS API used here (the repo's `lib` has no DOM typings). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  grow(pages: number): number;
}
interface WebAssemblyApi {
  validate(bytes: Uint8Array<ArrayBuffer>): boolean;
  Module: new (bytes: Uint8Array<ArrayBuffer>) => object;
  Instance: new (
    module: object,
    imports: Record<string, Record<string, unknown>>,
  ) => { readonly exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number; maximum?: number }) => WasmMemory;
  RuntimeError: typeof Error;
}
/** The engine's `WebAssembly` global, typed. */
export const webAssembly = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

export const uleb = (value: number): number[] => {
  const out: number[] = [];
  let n = value >>> 0;
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
};

export const sleb = (value: number): number[] => {
  const out: number[] = [];
  let n = value | 0;
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
};

export const name = (s: string): number[] => [...uleb(s.length), ...new TextEncoder().encode(s)];
export const vector = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
export const section = (id: number, bytes: number[]): number[] => [
  id,
  ...uleb(bytes.length),
  ...bytes,
];

export const I32 = 0x7f;
export const F32 = 0x7d;
export const V128 = 0x7b;
export const SIMD = 0xfd;
export const op = {
  get: (i: number) => [0x20, ...uleb(i)],
  set: (i: number) => [0x21, ...uleb(i)],
  tee: (i: number) => [0x22, ...uleb(i)],
  i32: (n: number) => [0x41, ...sleb(n)],
  add: [0x6a],
  sub: [0x6b],
  mul: [0x6c],
  ltU: [0x49],
  eqz: [0x45],
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  brIf: (depth: number) => [0x0d, ...uleb(depth)],
  end: [0x0b],
  /** v128.load / v128.store with alignment hint 2^4 and a byte offset. */
  load: (offset: number) => [SIMD, ...uleb(0x00), 4, ...uleb(offset)],
  store: (offset: number) => [SIMD, ...uleb(0x0b), 4, ...uleb(offset)],
  /** v128.load32_splat: one float broadcast to four lanes. */
  splat: (offset: number) => [SIMD, ...uleb(0x09), 2, ...uleb(offset)],
  zero: [SIMD, ...uleb(0x0c), ...new Array<number>(16).fill(0)],
  fAdd: [SIMD, ...uleb(0xe4)],
  fSub: [SIMD, ...uleb(0xe5)],
  fDiv: [SIMD, ...uleb(0xe7)],
  fSqrt: [SIMD, ...uleb(0xe3)],
  /** f32x4.splat of an f32 on the stack. */
  fSplat: [SIMD, ...uleb(0x13)],
  fMul: [SIMD, ...uleb(0xe6)],
  f32Load: [0x2a, 2, 0],
  f32Store: (offset: number) => [0x38, 2, ...uleb(offset)],
  /** f32x4.relaxed_madd(a, b, c) = a · b + c (relaxed SIMD). */
  fMadd: [SIMD, ...uleb(0x105)],
};

/** A function body: local declarations (count, type) and the instructions. */
export function functionCode(locals: [number, number][], body: number[]): number[] {
  const code = [...vector(locals.map(([n, type]) => [...uleb(n), type])), ...body];
  return [...uleb(code.length), ...code];
}

/**
 * A module importing `env.memory` with the given functions (each `[type, code]`, code from
 * {@link functionCode}) exported under their names.
 */
export function moduleBytes(
  functions: readonly { name: string; params: readonly number[]; code: number[] }[],
): Uint8Array<ArrayBuffer> {
  const types = functions.map((f) => [0x60, ...vector(f.params.map((t) => [t])), 0]);
  const bytes = [
    0x00,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0,
    ...section(1, vector(types)),
    ...section(2, vector([[...name('env'), ...name('memory'), 0x02, 0x00, ...uleb(1)]])),
    ...section(3, vector(functions.map((_, i) => uleb(i)))),
    ...section(7, vector(functions.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]))),
    ...section(10, vector(functions.map((f) => f.code))),
  ];
  return new Uint8Array(bytes);
}
