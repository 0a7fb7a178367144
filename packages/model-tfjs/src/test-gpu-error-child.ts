/**
 * A child process for the webgpu error tests (not part of the package API): chains 30 dispatches
 * of a kernel whose WGSL does not compile, reads the result once and prints what it caught, then
 * shows the backend still works. Every dispatch after the first raises another GPU error; the
 * test checks that none of them reaches stdout, only the one typed error.
 *   node --conditions=@agentrl/source src/test-gpu-error-child.ts
 */
import * as tf from '@tensorflow/tfjs';
import { selectBackend } from './backends/select.ts';
import { WebGPUError } from './backends/webgpu/errors.ts';
import { elementwiseProgram, type WebGPUProgram } from './backends/webgpu/kernels/programs.ts';

await selectBackend({ backend: 'webgpu' });
tf.registerKernel({
  kernelName: 'AgentrlTestBrokenChild',
  backendName: 'webgpu',
  kernelFunc: ({ inputs, backend }) => {
    const x = inputs.x as tf.TensorInfo;
    const runner = backend as unknown as {
      runWebGPUProgram(p: WebGPUProgram, i: tf.TensorInfo[], d: 'float32'): tf.TensorInfo;
    };
    const program = elementwiseProgram(
      'test_broken_child',
      ['x'],
      [...x.shape],
      'result[index] = undefinedName;',
    );
    return runner.runWebGPUProgram(program, [x], 'float32');
  },
});
let y: tf.Tensor = tf.ones([4096]);
for (let i = 0; i < 30; i++) {
  y = tf.add(tf.engine().runKernel('AgentrlTestBrokenChild', { x: y }) as tf.Tensor, 1);
}
try {
  await y.data();
  process.stdout.write('no error\n');
} catch (error) {
  if (!(error instanceof WebGPUError)) throw error;
  process.stdout.write(`typed ${error.kind}, ${String(error.details?.suppressed)} more\n`);
}
const next = await tf.add(tf.ones([4096]), 1).data();
process.stdout.write(`next ${next[0]}\n`);
process.exit(0);
