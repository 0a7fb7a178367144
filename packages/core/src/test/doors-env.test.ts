import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { createDoorsEnv, DOORS_WORDS, doorsParser, doorsPrompt } from './doors-env.ts';

describe('the doors environment', () => {
  it('opens a door only for the key and pays only when the last door opens', async () => {
    const env = createDoorsEnv({ rooms: 2 });
    const start = await env.reset({ seed: 0 });
    expect(start.observation.text).toBe('room 1 of 2');
    expect(start.observation.admissibleActions).toEqual([...DOORS_WORDS]);
    const wrong = await env.step('red');
    expect(wrong.observation.anchor).toBe(start.observation.anchor);
    expect(wrong.reward).toBe(0);
    const first = await env.step('gold');
    expect(first.observation.text).toBe('room 2 of 2');
    expect(first.reward).toBe(0);
    const last = await env.step(' GOLD ');
    expect(last).toMatchObject({ reward: 10, terminated: true, truncated: false });
    expect(last.info.won).toBe(true);
    await env.close();
  });

  it('truncates after maxSteps without the key, with the same state at every step', async () => {
    const env = createDoorsEnv({ rooms: 1, maxSteps: 3, key: 'blue' });
    await env.reset({ seed: 1 });
    const anchors: string[] = [];
    let result = await env.step('gold');
    anchors.push(result.observation.anchor);
    result = await env.step('green');
    anchors.push(result.observation.anchor);
    result = await env.step('red');
    anchors.push(result.observation.anchor);
    expect(result).toMatchObject({ reward: 0, terminated: false, truncated: true });
    expect(new Set(anchors).size).toBe(1);
    await env.close();
  });

  it('rejects options that make the task impossible, naming the field', () => {
    expect(() => createDoorsEnv({ rooms: 0 })).toThrow(ConfigError);
    expect(() => createDoorsEnv({ rooms: 3, maxSteps: 2 })).toThrow(/maxSteps/);
    expect(() => createDoorsEnv({ key: 'purple' })).toThrow(/key "purple"/);
  });

  it('parses the first word of any text without throwing', () => {
    expect(doorsParser('Gold and more')).toEqual({ action: 'gold', valid: true });
    expect(doorsParser('  ')).toEqual({ action: '', valid: false });
    fc.assert(
      fc.property(fc.string(), (text) => {
        const parsed = doorsParser(text);
        expect(parsed.valid).toBe(parsed.action.length > 0);
      }),
    );
  });

  it('prompts with the room and the words', async () => {
    const env = createDoorsEnv();
    const { observation, info } = await env.reset({ seed: 0 });
    expect(
      doorsPrompt({
        initialObservation: observation,
        history: [],
        current: observation,
        stepIndex: 0,
        info,
      }),
    ).toBe('room 1 of 2: red green blue gold');
    await env.close();
  });
});
