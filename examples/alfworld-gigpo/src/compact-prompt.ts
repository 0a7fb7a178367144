/**
 * The CPU demo's short prompt is the env package's `alfworldCompactPrompt` (`env.prompt:
 * compact` in a run config); the response the expert demonstrations teach is the paper's tags
 * around the action.
 */
import { alfworldCompactPrompt } from '@agentrl/env-alfworld';

export const compactPrompt = alfworldCompactPrompt;

/** The response the expert demonstrations teach: the paper's tags around the action. */
export function expertResponse(action: string): string {
  return `<think> </think> <action> ${action} </action>`;
}
