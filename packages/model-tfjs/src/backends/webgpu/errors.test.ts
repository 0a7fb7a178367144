import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isAgentRLError } from '@agentrl/core';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCausalLM } from '../../model/load.ts';
import { selectBackend } from '../select.ts';
import { elementwiseProgram, type WebGPUProgram } from './kernels/programs.ts';
import { webgpuBytes } from './memory.ts';
import { probeWebGPUAdapter, WebGPUError, withGpuErrorScope } from './setup.ts';

const adapter = await probeWebGPUAdapter().catch(() => undefined);
const skipReason =
  adapter === undefined ? ' (skipped: no WebGPU adapter; see .ci/setup-vulkan.sh)' : '';
if (skipReason !== '') console.log(`webgpu error tests skipped${skipReason}`);

const BROKEN = 'AgentrlTestBrokenShader';

/** A kernel whose WGSL does not compile: the GPU reports a validation error, tfjs returns junk. */
function brokenOp(x: tf.Tensor): tf.Tensor {
  return tf.engine().runKernel(BROKEN, { x }) as tf.Tensor;
}

describe.skipIf(adapter === undefined)(`GPU errors on webgpu${skipReason}`, () => {
  beforeAll(async () => {
    await selectBackend({ backend: 'webgpu' });
    tf.registerKernel({
      kernelName: BROKEN,
      backendName: 'webgpu',
      kernelFunc: ({ inputs, backend }) => {
        const x = inputs.x as tf.TensorInfo;
        const program = elementwiseProgram(
          'test_broken',
          ['x'],
          [...x.shape],
          'result[index] = undefinedName;',
        );
        const runner = backend as unknown as {
          runWebGPUProgram(p: WebGPUProgram, i: tf.TensorInfo[], d: 'float32'): tf.TensorInfo;
        };
        return runner.runWebGPUProgram(program, [x], 'float32');
      },
    });
  });

  it('throws a typed validation error from the read that waited on the failed work', async () => {
    const x = tf.ones([8]);
    const y = brokenOp(x);
    await expect(y.data()).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof WebGPUError && e.kind === 'validation' && isAgentRLError(e, 'BACKEND_FAILURE'),
    );
    // The error is reported once; the next, valid, call works.
    expect(Array.from(await tf.add(x, 1).data())).toEqual(Array(8).fill(2));
    tf.dispose([x, y]);
  });

  it('holds an embedding over the binding limit in row blocks, and fails a whole tensor over it with binding-limit', async () => {
    const model = await createCausalLM(
      {
        vocab_size: 256,
        hidden_size: 32,
        intermediate_size: 48,
        num_hidden_layers: 1,
        num_attention_heads: 4,
        num_key_value_heads: 2,
        tie_word_embeddings: true,
      },
      { seed: 1, backend: 'webgpu', webgpu: { maxBindingBytes: 16 * 1024 } }, // embedding: 32 KiB
    );
    try {
      expect(model.parameterStorage('model.embed_tokens.weight').variables).toHaveLength(2);
      const [lp] = await model.tokenLogProbs([[1, 2, 3]]);
      expect(lp?.every((v) => Number.isFinite(v) && v < 0)).toBe(true);
      const whole = tf.ones([256, 32]);
      expect(() => tf.matMul(tf.ones([1, 32]), whole, false, true)).toSatisfy(
        (fn: () => unknown) => {
          try {
            fn();
            return false;
          } catch (e) {
            return e instanceof WebGPUError && e.kind === 'binding-limit';
          }
        },
      );
      whole.dispose();
    } finally {
      await selectBackend({ backend: 'webgpu' }); // the binding cap back to the adapter's
      model.dispose();
    }
    expect(Array.from(await tf.add(tf.ones([4]), 1).data())).toEqual([2, 2, 2, 2]);
  });

  it('refuses synchronous reads with a typed error naming the async alternative', () => {
    const x = tf.add(tf.ones([4096]), 1); // large enough to run on the GPU
    expect(() => x.dataSync()).toThrow(/await tensor.data\(\)/);
    x.dispose();
  });

  it('throws it from the call that caused it inside withGpuErrorScope', async () => {
    const x = tf.ones([8]);
    await expect(
      withGpuErrorScope('the broken test op', () => {
        brokenOp(x).dispose();
      }),
    ).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof WebGPUError &&
        e.kind === 'validation' &&
        e.message.includes('the broken test op'),
    );
    expect(Array.from(await tf.add(x, 1).data())).toEqual(Array(8).fill(2));
    x.dispose();
  });

  it('reports a run of GPU errors once, as the first typed error, and prints none of the rest', () => {
    // Dawn's Node binding prints every uncaptured error to stdout unless it is cancelled: the
    // 30 failing dispatches of the child would print ~250 lines.
    const run = spawnSync(
      process.execPath,
      ['--conditions=@agentrl/source', 'src/test-gpu-error-child.ts'],
      { cwd: fileURLToPath(new URL('../../..', import.meta.url)), encoding: 'utf8' },
    );
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^typed validation, [1-9]\d* more$/);
    expect(lines[1]).toBe('next 2');
  });

  it('fails a buffer past webgpu.maxPoolBytes with one typed out-of-memory error naming what to shrink', async () => {
    const { pool } = webgpuBytes();
    await selectBackend({ backend: 'webgpu', webgpu: { maxPoolBytes: pool + 2 ** 20 } });
    const big = tf.ones([2 ** 20]); // 4 MiB once on the GPU
    try {
      expect(() => tf.add(big, 1)).toSatisfy((fn: () => unknown) => {
        try {
          fn();
          return false;
        } catch (e) {
          return (
            e instanceof WebGPUError &&
            e.kind === 'out-of-memory' &&
            isAgentRLError(e, 'BACKEND_FAILURE') &&
            /webgpu\.maxPoolBytes/.test(e.message) &&
            /microBatchSize/.test(e.message)
          );
        }
      });
    } finally {
      big.dispose();
      await selectBackend({ backend: 'webgpu' }); // no cap
    }
    expect(Array.from(await tf.add(tf.ones([4]), 1).data())).toEqual([2, 2, 2, 2]);
  });

  it('empties the free pool instead of failing when the buffers in use fit under webgpu.maxPoolBytes', async () => {
    // Tensors of 16 new sizes, 256 KiB to 1 MiB each, one at a time: their buffers pile up in the
    // pool (~10 MiB) unless it is emptied; in use at once, never more than ~2 MiB.
    const { pool } = webgpuBytes();
    await selectBackend({ backend: 'webgpu', webgpu: { maxPoolBytes: pool + 4 * 2 ** 20 } });
    try {
      for (let i = 0; i < 16; i++) {
        const n = 65_536 + i * 12_288;
        const y = tf.tidy(() => tf.add(tf.fill([n], 1), 1));
        expect((await y.data())[n - 1]).toBe(2);
        y.dispose();
      }
      expect(webgpuBytes().pool).toBeLessThanOrEqual(pool + 4 * 2 ** 20);
    } finally {
      await selectBackend({ backend: 'webgpu' });
    }
  });
});
