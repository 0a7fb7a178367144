/**
 * The invalid-action penalty (verl-agent's `apply_invalid_action_penalty`): c is subtracted from a
 * value of each row whose action was invalid. The estimators apply it
 * through {@link subtractInvalidActionPenalty}: to the episode score of every estimator and, in
 * GiGPO, after discounting, to the step return of the invalid row only.
 */
import { InvalidInputError } from '@agentrl/core';
import { penaltyOption } from './batch.ts';

/**
 * `out[i] = values[i] − c·invalid[i]` for every row (`out` may be `values`: in place). The one
 * implementation of the penalty, on the estimators' dense invalid flags.
 */
export function subtractInvalidActionPenalty(
  values: Float64Array,
  invalid: Uint8Array,
  c: number,
  out: Float64Array = new Float64Array(values.length),
): Float64Array {
  for (let i = 0; i < values.length; i++) {
    out[i] = invalid[i] === 1 ? (values[i] as number) - c : (values[i] as number);
  }
  return out;
}

/**
 * `values[i] − c·[actionValid[i] is false]`, as a new array: the penalty the estimators apply,
 * for values computed elsewhere.
 */
export function applyInvalidActionPenalty(
  values: ArrayLike<number>,
  actionValid: ArrayLike<boolean>,
  coefficient = 0.1,
): Float64Array {
  const c = penaltyOption(coefficient);
  if (values.length !== actionValid.length) {
    throw new InvalidInputError(
      `actionValid has ${actionValid.length} entries but values has ${values.length}; they must match`,
      { details: { field: 'actionValid' } },
    );
  }
  const invalid = Uint8Array.from({ length: values.length }, (_, i) => (actionValid[i] ? 0 : 1));
  return subtractInvalidActionPenalty(Float64Array.from(values), invalid, c);
}
