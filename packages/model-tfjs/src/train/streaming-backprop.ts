/**
 * A backward pass that frees as it goes. tfjs's `engine.gradients` (4.x) walks the tape in
 * reverse inside one `tidy` and keeps every gradient it computes, and every tensor saved for the
 * backward pass, until the whole pass ends: its peak holds all the activations' gradients at once
 * besides the saved activations. Once a tape node's gradient has run, the gradients of its
 * outputs and its saved tensors (clones the node owns) are needed by no later node: the walk only
 * moves to nodes recorded earlier, which never read them. So while `fn` runs, each recorded
 * node's gradient function is wrapped to free the previous node's output gradients and saved
 * tensors when the next node starts. A gradient tensor that some node returned for two inputs
 * (one object, two places in the engine's map) is left alone, as are nodes outside the walk.
 */
import * as tf from '@tensorflow/tfjs';

type GradientClosures = Record<string, () => tf.Tensor>;

interface TapeNodeLike {
  saved?: tf.Tensor[];
  gradient?: (dys: (tf.Tensor | null)[]) => GradientClosures;
}

interface EngineLike {
  addTapeNode: (...args: unknown[]) => void;
  state: { activeTape: TapeNodeLike[] | null };
}

/** Runs `fn` (a `tf.variableGrads` / `tf.grads` call and its forward pass) with the freeing walk. */
export function withStreamingBackprop<T>(fn: () => T): T {
  const engine = tf.engine() as unknown as Partial<EngineLike>;
  if (typeof engine.addTapeNode !== 'function' || engine.state === undefined) return fn();
  const eng = engine as EngineLike;
  const own = Object.hasOwn(eng, 'addTapeNode');
  const addTapeNode = eng.addTapeNode;
  // How often each gradient tensor was handed to the engine as an input's gradient.
  const returned = new Map<tf.Tensor, number>();
  let previous: { dys: tf.Tensor[]; saved: readonly tf.Tensor[] } | undefined;
  const release = () => {
    if (previous === undefined) return;
    for (const dy of previous.dys) if ((returned.get(dy) ?? 0) <= 1) dy.dispose();
    for (const s of previous.saved) if (!returned.has(s)) s.dispose();
    previous = undefined;
  };
  eng.addTapeNode = (...args: unknown[]) => {
    addTapeNode.apply(eng, args);
    const tape = eng.state.activeTape;
    const node = tape?.[tape.length - 1];
    const gradient = node?.gradient;
    if (node === undefined || gradient === undefined) return;
    node.gradient = (dys) => {
      release();
      const closures = gradient(dys);
      const wrapped: GradientClosures = {};
      for (const [name, closure] of Object.entries(closures)) {
        wrapped[name] = () => {
          const dx = closure();
          returned.set(dx, (returned.get(dx) ?? 0) + 1);
          return dx;
        };
      }
      previous = {
        dys: dys.filter((dy): dy is tf.Tensor => dy !== null),
        saved: node.saved ?? [],
      };
      return wrapped;
    };
  };
  try {
    return fn();
  } finally {
    if (own) eng.addTapeNode = addTapeNode;
    else delete (eng as { addTapeNode?: unknown }).addTapeNode;
  }
}
