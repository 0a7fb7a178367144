import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16 } from './dtype.ts';

const ALL_16_BIT = Uint16Array.from({ length: 65536 }, (_, i) => i);

/** Float32 values from arbitrary bit patterns (NaNs, infinities and subnormals included). */
const f32Values = fc
  .array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 1, maxLength: 64 })
  .map((bits) => new Float32Array(Uint32Array.from(bits).buffer));

const bf16 = (bits: number) => bf16ToF32(Uint16Array.of(bits))[0] as number;

/**
 * The BF16 pattern nearest to `x` among `lo` and `lo + 1`, ties to the even one; past the largest
 * finite value `lo + 1` is infinity, which stands for 2^128 (where the next value would be).
 */
function nearestBf16(x: number, lo: number): number {
  const hi = bf16(lo + 1);
  const dLo = Math.abs(x - bf16(lo));
  const dHi = Math.abs(x - (Number.isFinite(hi) ? hi : Math.sign(hi) * 2 ** 128));
  if (dLo !== dHi) return dLo < dHi ? lo : lo + 1;
  return lo % 2 === 0 ? lo : lo + 1;
}

describe('16-bit float conversions', () => {
  it('turns every F16 and BF16 bit pattern into float32 and back unchanged (NaNs stay NaN)', () => {
    for (const [toF32, fromF32] of [
      [f16ToF32, f32ToF16],
      [bf16ToF32, f32ToBf16],
    ] as const) {
      const wide = toF32(ALL_16_BIT);
      const back = fromF32(wide);
      for (let i = 0; i < 65536; i++) {
        if (Number.isNaN(wide[i]))
          expect(Number.isNaN(toF32(back.subarray(i, i + 1))[0])).toBe(true);
        else expect(back[i]).toBe(i);
      }
    }
  });

  it('decodes F16 as IEEE half precision: subnormals, the largest value and infinities', () => {
    expect([
      ...f16ToF32(Uint16Array.of(0x0001, 0x03ff, 0x3c00, 0x7bff, 0x7c00, 0xfc00, 0x8000)),
    ]).toEqual([2 ** -24, 1023 * 2 ** -24, 1, 65504, Infinity, -Infinity, -0]);
  });

  it('rounds float32 to the nearest F16 value, ties to even, as Math.f16round does', () => {
    const f16round = (Math as { f16round?: (x: number) => number }).f16round;
    expect(f16round, 'Math.f16round (Node >= 24) is the oracle of this test').toBeTypeOf(
      'function',
    );
    fc.assert(
      fc.property(f32Values, (values) => {
        const ours = f16ToF32(f32ToF16(values));
        values.forEach((x, i) => {
          expect(Object.is(ours[i], f16round?.(x)) || Number.isNaN(x)).toBe(true);
        });
      }),
    );
  });

  it('rounds the largest float32 values to BF16 infinity and the smallest to zero, as torch does', () => {
    const values = new Float32Array(
      Uint32Array.of(0x7f7fffff, 0xff7fffff, 0x00000001, 0x7f7f7fff).buffer,
    );
    expect([...f32ToBf16(values)]).toEqual([0x7f80, 0xff80, 0x0000, 0x7f7f]);
  });

  it('rounds float32 to the nearest BF16 value, ties to even, and keeps NaN a quiet NaN', () => {
    fc.assert(
      fc.property(f32Values, (values) => {
        const ours = f32ToBf16(values);
        const bits = new Uint32Array(values.buffer);
        values.forEach((x, i) => {
          if (Number.isNaN(x)) {
            expect((ours[i] as number) & 0x7fc0).toBe(0x7fc0);
            return;
          }
          const lo = (bits[i] as number) >>> 16;
          expect(ours[i]).toBe(Number.isFinite(x) ? nearestBf16(x, lo) : lo);
        });
      }),
    );
  });
});
