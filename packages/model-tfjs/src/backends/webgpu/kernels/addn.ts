/**
 * tfjs's webgpu AddN binds every input as its own storage buffer, and a device allows only
 * `maxStorageBuffersPerShaderStage` of them (8 by default, 16 on lavapipe): summing 26 gradient
 * norms failed validation and returned zeros. This wraps the kernel to sum in groups that fit.
 */
import * as tf from '@tensorflow/tfjs';

type KernelFunc = tf.KernelConfig['kernelFunc'];

/** Replaces the webgpu AddN kernel by one that never binds more than `maxStorageBuffers`. */
export function registerChunkedAddN(maxStorageBuffers: number): void {
  const original = tf.getKernel('AddN', 'webgpu');
  if (original === undefined) return;
  const base =
    (original as tf.KernelConfig & { agentrlBase?: KernelFunc }).agentrlBase ?? original.kernelFunc;
  const perCall = Math.max(2, maxStorageBuffers - 1); // one binding is the output
  const kernelFunc: KernelFunc = (args) => {
    let list = Object.values(args.inputs) as tf.TensorInfo[];
    if (list.length <= perCall) return base(args);
    const backend = args.backend as tf.KernelBackend;
    const owned: tf.TensorInfo[] = [];
    while (list.length > perCall) {
      const next: tf.TensorInfo[] = [];
      for (let i = 0; i < list.length; i += perCall) {
        const group = list.slice(i, i + perCall);
        if (group.length === 1) {
          next.push(group[0] as tf.TensorInfo);
          continue;
        }
        const sum = base({
          ...args,
          inputs: group as unknown as tf.NamedTensorInfoMap,
        }) as tf.TensorInfo;
        owned.push(sum);
        next.push(sum);
      }
      list = next;
    }
    const out = base({
      ...args,
      inputs: list as unknown as tf.NamedTensorInfoMap,
    }) as tf.TensorInfo;
    for (const t of owned) backend.disposeData(t.dataId);
    return out;
  };
  tf.unregisterKernel('AddN', 'webgpu');
  tf.registerKernel({ ...original, kernelFunc, agentrlBase: base } as tf.KernelConfig);
}
