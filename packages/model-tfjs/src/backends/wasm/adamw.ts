/**
 * The AdamW update of one parameter as one pass of WebAssembly SIMD over the wasm backend's heap.
 * Composed from tfjs ops, the update is ~16 kernels per parameter (a model of 50 parameters runs
 * 800 kernels per step, each with tfjs's per-kernel overhead and a pass over memory); here it is
 * one call per parameter reading the parameter, gradient and both moments once and writing the
 * three new tensors. Every operation is the float32 operation the composed ops perform, in the
 * same order (separate multiply and add, no fused multiply-add), so the results are bit for bit
 * those of the composed update on wasm and on the cpu backend.
 */
import {
  F32,
  functionCode,
  I32,
  moduleBytes,
  op,
  V128,
  type WasmMemory,
  webAssembly,
} from './emit.ts';

/** The scalars of one update, as the composed ops use them (each rounded to float32 there). */
export interface AdamWStepScalars {
  readonly beta1: number;
  readonly beta2: number;
  /** `1 - beta1^step`, `1 - beta2^step`. */
  readonly bias1: number;
  readonly bias2: number;
  readonly eps: number;
  readonly lr: number;
  readonly weightDecay: number;
  /** Gradient scale from norm clipping (1 when not clipped). */
  readonly gradScale: number;
}

const SCALARS = ['b1', 'ob1', 'b2', 'ob2', 'bias1', 'bias2', 'eps', 'decay', 'lr', 'gs'] as const;

/**
 * `adamw(p, g, m, v, outP, outM, outV, n4, b1, 1-b1, b2, 1-b2, bias1, bias2, eps, decay, lr, gs)`
 * over `n4` groups of four floats at the given byte offsets:
 * `g' = g·gs; m' = m·b1 + g'·(1-b1); v' = v·b2 + (g'·g')·(1-b2);
 *  p' = p·decay − ((m'/bias1) / (sqrt(v'/bias2) + eps))·lr`.
 */
function adamwBody(): number[] {
  const [p, g, m, v, outP, outM, outV, n4] = [0, 1, 2, 3, 4, 5, 6, 7];
  const scalar = (k: (typeof SCALARS)[number]) => 8 + SCALARS.indexOf(k);
  const offset = 18; // i32: byte offset into every array
  const splat = 19; // v128 splats, in SCALARS order
  const [gv, m2, v2] = [
    splat + SCALARS.length,
    splat + SCALARS.length + 1,
    splat + SCALARS.length + 2,
  ];
  const s = (k: (typeof SCALARS)[number]) => op.get(splat + SCALARS.indexOf(k));
  const at = (base: number) => [...op.get(base), ...op.get(offset), ...op.add];
  const body: number[] = [];
  const emit = (...parts: number[][]) => {
    for (const part of parts) body.push(...part);
  };
  for (const k of SCALARS) emit(op.get(scalar(k)), op.fSplat, op.set(splat + SCALARS.indexOf(k)));
  emit(op.i32(0), op.set(offset));
  emit(op.block, op.get(n4), op.eqz, op.brIf(0), op.loop);
  emit(at(g), op.load(0), s('gs'), op.fMul, op.set(gv));
  // m' = m·b1 + g'·(1-b1)
  emit(at(m), op.load(0), s('b1'), op.fMul, op.get(gv), s('ob1'), op.fMul, op.fAdd, op.set(m2));
  // v' = v·b2 + (g'·g')·(1-b2)
  emit(at(v), op.load(0), s('b2'), op.fMul);
  emit(op.get(gv), op.get(gv), op.fMul, s('ob2'), op.fMul, op.fAdd, op.set(v2));
  // p' = p·decay − ((m'/bias1) / (sqrt(v'/bias2) + eps))·lr
  emit(at(outP));
  emit(at(p), op.load(0), s('decay'), op.fMul);
  emit(op.get(m2), s('bias1'), op.fDiv);
  emit(op.get(v2), s('bias2'), op.fDiv, op.fSqrt, s('eps'), op.fAdd, op.fDiv);
  emit(s('lr'), op.fMul, op.fSub, op.store(0));
  emit(at(outM), op.get(m2), op.store(0));
  emit(at(outV), op.get(v2), op.store(0));
  emit(op.get(offset), op.i32(16), op.add, op.set(offset));
  emit(op.get(n4), op.i32(1), op.sub, op.tee(n4), op.brIf(0), op.end, op.end);
  body.push(0x0b);
  return functionCode(
    [
      [1, I32],
      [SCALARS.length + 3, V128],
    ],
    body,
  );
}

type AdamWFn = (...args: number[]) => void;

/** Byte offsets of the four inputs and three outputs of one update. */
export interface AdamWPointers {
  readonly param: number;
  readonly grad: number;
  readonly m: number;
  readonly v: number;
  readonly outParam: number;
  readonly outM: number;
  readonly outV: number;
}

/** The update compiled against one heap. */
export class WasmAdamW {
  readonly #memory: WasmMemory;
  readonly #adamw: AdamWFn;

  constructor(memory: WasmMemory) {
    this.#memory = memory;
    const bytes = moduleBytes([
      {
        name: 'adamw',
        params: [...new Array<number>(8).fill(I32), ...new Array<number>(SCALARS.length).fill(F32)],
        code: adamwBody(),
      },
    ]);
    const module = new webAssembly.Module(bytes);
    this.#adamw = new webAssembly.Instance(module, { env: { memory } }).exports.adamw as AdamWFn;
  }

  /** Updates `n` floats; the outputs may not alias the inputs. */
  step(ptr: AdamWPointers, n: number, a: AdamWStepScalars): void {
    const f = Math.fround;
    const c = {
      b1: f(a.beta1),
      ob1: f(1 - a.beta1),
      b2: f(a.beta2),
      ob2: f(1 - a.beta2),
      bias1: f(a.bias1),
      bias2: f(a.bias2),
      eps: f(a.eps),
      // The composed update skips the decay product when weightDecay is 0; × 1 is exact.
      decay: a.weightDecay === 0 ? 1 : f(1 - a.lr * a.weightDecay),
      lr: f(a.lr),
      gs: f(a.gradScale),
    };
    const n4 = n >>> 2;
    this.#adamw(
      ptr.param,
      ptr.grad,
      ptr.m,
      ptr.v,
      ptr.outParam,
      ptr.outM,
      ptr.outV,
      n4,
      ...SCALARS.map((k) => c[k]),
    );
    // The last n % 4 floats in JS, with the same float32 rounding after every operation.
    const heap = new Float32Array(this.#memory.buffer);
    for (let i = n4 * 4; i < n; i++) {
      const g = f((heap[(ptr.grad >>> 2) + i] as number) * c.gs);
      const m2 = f(f((heap[(ptr.m >>> 2) + i] as number) * c.b1) + f(g * c.ob1));
      const v2 = f(f((heap[(ptr.v >>> 2) + i] as number) * c.b2) + f(f(g * g) * c.ob2));
      const update = f(f(m2 / c.bias1) / f(f(Math.sqrt(f(v2 / c.bias2))) + c.eps));
      heap[(ptr.outParam >>> 2) + i] = f(
        f((heap[(ptr.param >>> 2) + i] as number) * c.decay) - f(update * c.lr),
      );
      heap[(ptr.outM >>> 2) + i] = m2;
      heap[(ptr.outV >>> 2) + i] = v2;
    }
  }
}
