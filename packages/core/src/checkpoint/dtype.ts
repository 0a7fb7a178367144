/**
 * BF16 / F16 <-> F32 conversions on bit patterns. Node 20 has no Float16Array, so both
 * directions are written out; F32 -> BF16 rounds to nearest even exactly as torch does.
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** BF16 bits -> F32 (exact: the 16 bits become the upper half of the float). */
export function bf16ToF32(src: Uint16Array, out = new Float32Array(src.length)): Float32Array {
  const bits = new Uint32Array(out.buffer, out.byteOffset, out.length);
  for (let i = 0; i < src.length; i++) bits[i] = (src[i] as number) << 16;
  return out;
}

/** F32 -> BF16 bits, round to nearest even; NaN becomes the quiet NaN 0x7FC0. */
export function f32ToBf16(src: Float32Array, out = new Uint16Array(src.length)): Uint16Array {
  const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
  for (let i = 0; i < src.length; i++) {
    const x = bits[i] as number;
    if ((x & 0x7fffffff) > 0x7f800000) {
      out[i] = ((x >>> 16) & 0x8000) | 0x7fc0;
    } else {
      out[i] = ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
    }
  }
  return out;
}

/** F16 bits -> F32 (exact, subnormals and inf/NaN included). */
export function f16ToF32(src: Uint16Array, out = new Float32Array(src.length)): Float32Array {
  for (let i = 0; i < src.length; i++) {
    const h = src[i] as number;
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >>> 10) & 0x1f;
    const mant = h & 0x3ff;
    let value: number;
    if (exp === 0) value = sign * mant * 2 ** -24;
    else if (exp === 31) value = mant === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
    else value = sign * (1 + mant / 1024) * 2 ** (exp - 15);
    out[i] = value;
  }
  return out;
}

/** F32 -> F16 bits, round to nearest even; values beyond 65504 become +-inf. */
export function f32ToF16(src: Float32Array, out = new Uint16Array(src.length)): Uint16Array {
  for (let i = 0; i < src.length; i++) out[i] = f32ToF16Bits(src[i] as number);
  return out;
}

function f32ToF16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0] as number;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    // Subnormal: shift the mantissa (with its implicit bit) and round to nearest even.
    const m = mant | 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rest = m & ((1 << shift) - 1);
    let r = m >>> shift;
    if (rest > half || (rest === half && (r & 1) === 1)) r += 1;
    return sign | r;
  }
  let r = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (r & 1) === 1)) r += 1;
  return sign | r;
}
