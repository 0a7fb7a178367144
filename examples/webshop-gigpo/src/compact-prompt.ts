/**
 * The demo's prompt is the `compact` prompt of `webshop/text-v1` (`webshopCompactPrompt` of
 * `@agentrl/env-webshop`: the instruction, the previous action and the current page in about 60
 * words; its module comment says what it keeps and why). This file adds the response the warm
 * start teaches.
 */
export {
  chosenOptions,
  compactPage,
  webshopCompactPrompt as compactPrompt,
} from '@agentrl/env-webshop';

/** The response the expert demonstrations teach: the paper's tags around the action. */
export function expertResponse(action: string): string {
  return `<think> </think> <action> ${action} </action>`;
}
