/**
 * Gradient accumulation over micro-batches without an add per parameter: while a micro-batch's
 * backward pass runs inside {@link accumulatingInto}, a kernel that computes the whole gradient of
 * a tensor in the running sums (a projection's weight, bias or LoRA factor, an RMSNorm weight)
 * takes that tensor's sum so far as an addend of its own output (a matmul's bias operand, a column
 * sum's addend): the gradient it returns is already the new running sum, and the train step adds
 * only the gradients no kernel took. The addition is the one the step would make (`sum + g`), so
 * the sums are the same bit for bit.
 */
import type * as tf from '@tensorflow/tfjs';

let pending: ReadonlyMap<object, tf.Tensor> | undefined;
let taken: Set<object> | undefined;

/**
 * Runs `fn` (a backward pass) with the running sums `sums` by tensor (the variables); returns what
 * it returned and the tensors whose gradient already includes their sum.
 */
export function accumulatingInto<T>(
  sums: ReadonlyMap<object, tf.Tensor>,
  fn: () => T,
): { result: T; included: ReadonlySet<object> } {
  const outer = { pending, taken };
  const included = new Set<object>();
  pending = sums;
  taken = included;
  try {
    return { result: fn(), included };
  } finally {
    pending = outer.pending;
    taken = outer.taken;
  }
}

/**
 * The running sum of `target`'s gradient to add into the gradient a kernel is about to compute,
 * or `undefined` (none, or already taken: a tensor's sum is added once). The caller must then
 * return the whole gradient of `target`, sum included.
 */
export function takeRunningSum(target: tf.Tensor): tf.Tensor | undefined {
  const sum = pending?.get(target);
  if (sum === undefined || taken === undefined || taken.has(target)) return undefined;
  taken.add(target);
  return sum;
}
