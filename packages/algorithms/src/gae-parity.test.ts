import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadPPOVectors } from '../test/ppo-vectors.ts';
import { computeGaeAdvantageReturn } from './gae.ts';
import { valueLoss } from './losses.ts';
import { valueLossReference } from './losses-reference.ts';

const vectors = loadPPOVectors();
const { relative, absolute } = vectors.tolerances;

function close(actual: number, expected: number, what: string, rel = relative): void {
  const diff = Math.abs(actual - expected);
  if (!(diff <= absolute + rel * Math.abs(expected))) {
    expect.fail(`${what}: got ${actual}, expected ${expected} (|diff| ${diff})`);
  }
}

function closeMatrix(actual: number[][], expected: number[][], what: string): void {
  expect(actual.length, what).toBe(expected.length);
  expected.forEach((row, b) => {
    expect((actual[b] as number[]).length, `${what}[${b}]`).toBe(row.length);
    row.forEach((e, t) => {
      close((actual[b] as number[])[t] as number, e, `${what}[${b}][${t}]`);
    });
  });
}

describe('GAE matches verl-agent compute_gae_advantage_return on every vector', () => {
  it('covers every layout and the scripts’ gamma = lam = 1', () => {
    expect(vectors.gaeCases.length).toBeGreaterThan(0);
    expect(vectors.gaeCases.some((c) => c.options.gamma === 1 && c.options.lam === 1)).toBe(true);
  });
  for (const c of vectors.gaeCases) {
    it(`${c.id}: ${c.description}`, () => {
      const r = computeGaeAdvantageReturn(c.inputs, c.options);
      closeMatrix(r.advantages, c.outputs.advantages, 'advantages');
      closeMatrix(r.returns, c.outputs.returns, 'returns');
    });
  }
  for (const c of vectors.gaeErrorCases) {
    it(`${c.id}: throws where the reference raises (${c.referenceError})`, () => {
      expect(() => computeGaeAdvantageReturn(c.inputs, c.options)).toThrow(/at least two masked/);
    });
  }
});

describe('the clipped value loss matches verl-agent compute_value_loss on every vector', () => {
  beforeAll(async () => {
    await tf.setBackend('cpu');
  });
  for (const c of vectors.valueLossCases) {
    it(`${c.id}: float64 reference`, () => {
      const r = valueLossReference(c.inputs, c.options);
      close(r.vfLoss, c.outputs.vfLoss, 'vfLoss');
      close(r.vfClipfrac, c.outputs.vfClipfrac, 'vfClipfrac');
    });
    it(`${c.id}: tfjs on the cpu backend (float32, 1e-6 relative)`, () => {
      const t = (m: number[][]) => tf.tensor2d(m);
      const inputs = {
        vpreds: t(c.inputs.vpreds),
        returns: t(c.inputs.returns),
        values: t(c.inputs.values),
        responseMask: t(c.inputs.responseMask),
      };
      const r = valueLoss(inputs, c.options);
      close(r.vfLoss.dataSync()[0] as number, c.outputs.vfLoss, 'vfLoss', 1e-6);
      close(r.vfClipfrac.dataSync()[0] as number, c.outputs.vfClipfrac, 'vfClipfrac', 1e-6);
      tf.dispose([r.vfLoss, r.vfClipfrac, ...Object.values(inputs)]);
    });
  }
  it('the value loss has a gradient in the predictions that matches central differences of the reference', () => {
    const c = vectors.valueLossCases.find((v) => v.options.lossAggMode === 'token-mean');
    if (c === undefined) throw new Error('no token-mean case');
    const { vpreds, returns, values, responseMask } = c.inputs;
    const grad = tf.grad(
      (v: tf.Tensor) =>
        valueLoss(
          {
            vpreds: v,
            returns: tf.tensor2d(returns),
            values: tf.tensor2d(values),
            responseMask: tf.tensor2d(responseMask),
          },
          c.options,
        ).vfLoss,
    )(tf.tensor2d(vpreds));
    const g = grad.arraySync() as number[][];
    const h = 1e-6;
    vpreds.forEach((row, b) => {
      row.forEach((_, t) => {
        const shifted = (d: number) =>
          valueLossReference(
            {
              ...c.inputs,
              vpreds: vpreds.map((r, i) => r.map((x, j) => (i === b && j === t ? x + d : x))),
            },
            c.options,
          ).vfLoss;
        const numeric = (shifted(h) - shifted(-h)) / (2 * h);
        expect(Math.abs(((g[b] as number[])[t] as number) - numeric)).toBeLessThan(1e-4);
      });
    });
    grad.dispose();
  });
});
