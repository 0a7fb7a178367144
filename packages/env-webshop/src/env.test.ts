import { isAgentRLError } from '@agentrl/core';
import { describe, expect, it } from 'vitest';
import { createWebshopEnv } from './create-env.ts';
import type { OptionPair } from './fuzz.ts';
import { parseAction, Shop } from './shop.ts';

const shop = Shop.create({ catalogue: { kind: 'synthetic', size: 120, seed: 11 } });

describe('parse_action', () => {
  it('follows the greedy regex and its no-op cases', () => {
    expect(parseAction('click[buy now] thanks')).toEqual({ name: 'click', arg: 'buy now' });
    expect(parseAction('search[a [b] c]')).toEqual({ name: 'search[a ', arg: 'b] c' });
    expect(parseAction('search[]')).toEqual({ name: 'search[]', arg: null });
    expect(parseAction('search[x]\nclick[y]')).toEqual({ name: 'search', arg: 'x' });
    expect(parseAction('hello')).toEqual({ name: 'hello', arg: null });
  });
});

describe('the direct env', () => {
  it('starts on the search page with the reference anchor and actions', async () => {
    const env = createWebshopEnv({ shop, split: 'all' });
    const { observation, info } = await env.reset({ seed: 0, task: 3 });
    expect(observation.anchor).toBe("'Search'");
    expect(observation.admissibleActions).toEqual(['search[<your query>]', 'click[search]']);
    expect(observation.text).toContain(`Your task is to: ${info.task}.`);
    expect(
      observation.text.startsWith(
        '\nYou are an expert autonomous agent operating in the WebShop e\u2011commerce environment. \n',
      ),
    ).toBe(true);
  });

  it('keeps click[search] inert and runs search from any page', async () => {
    const env = createWebshopEnv({ shop, split: 'all' });
    await env.reset({ seed: 0, task: 0 });
    const inert = await env.step('click[search]');
    expect(inert.observation.anchor).toBe("'Search'");
    const results = await env.step('search[shirt]');
    expect(results.observation.anchor).toMatch(
      /^'Back to Search' \[SEP\] 'Page 1 \(Total results: \d+\)' \[SEP\] 'Next >'/,
    );
    const asin = results.observation.admissibleActions?.find((a) => /^click\[b0/.test(a));
    if (!asin) throw new Error('no product on the results page');
    const item = await env.step(asin);
    expect(item.observation.admissibleActions).toContain('click[buy now]');
    const again = await env.step('search[hat]');
    expect(again.observation.anchor).toMatch(/^'Back to Search' \[SEP\] 'Page 1/);
  });

  it('offers Next past the last page, with an empty page', async () => {
    const env = createWebshopEnv({ shop, split: 'all', maxSteps: 30 });
    await env.reset({ seed: 0, task: 0 });
    let r = await env.step('search[shirt]');
    for (let i = 0; i < 6; i++) r = await env.step('click[next >]');
    expect(r.observation.anchor).toMatch(
      /'Page 7 \(Total results: \d+\)' \[SEP\] '< Prev' \[SEP\] 'Next >'$/,
    );
    expect(r.observation.admissibleActions).toEqual([
      'click[back to search]',
      'click[< prev]',
      'click[next >]',
    ]);
  });

  it('keeps options on sub-pages and clears them when < Prev re-runs the search', async () => {
    const goal = shop.goalSet(0).goals.findIndex((g) => g.goalOptions.length > 0);
    const env = createWebshopEnv({ shop, split: 'all', maxSteps: 30 });
    const { info } = await env.reset({ seed: 0, task: goal });
    const g = shop.goalSet(0).goals[goal];
    if (!g) throw new Error('no goal with options');
    const [optionName, value] = g.goalOptions[0] as OptionPair;
    const product = shop.byAsin.get(g?.asin ?? '');
    await env.step(`search[${product?.Title}]`);
    const item = await env.step(`click[${product?.asin.toLowerCase()}]`);
    expect(item.info.effect).toBe('product');
    expect((await env.step(`click[${value}]`)).info.effect).toBe('option');
    await env.step('click[features]');
    expect((await env.step('click[< prev]')).info.effect).toBe('prev-sub');
    const bought = await env.step('click[buy now]');
    expect(bought.terminated).toBe(true);
    expect(bought.observation.anchor).toContain(`options [SEP] {"${optionName}": "${value}"}`);
    expect(info.goalAsin).toBe(g?.asin);
  });

  it('scores 1 and rewards 10 when the scripted oracle buys the goal product with its options', async () => {
    const { goals } = shop.goalSet(0);
    let found = 0;
    let perfect = 0;
    for (let i = 0; i < goals.length; i++) {
      const goal = goals[i];
      if (!goal) continue;
      const env = createWebshopEnv({ shop, split: 'all', maxSteps: 15 });
      await env.reset({ seed: 0, task: i });
      const product = shop.byAsin.get(goal.asin);
      const results = await env.step(`search[${product?.Title}]`);
      if (!results.observation.admissibleActions?.includes(`click[${goal.asin.toLowerCase()}]`))
        continue;
      found++;
      await env.step(`click[${goal.asin.toLowerCase()}]`);
      for (const o of goal.goalOptions)
        await env.step(`click[${typeof o === 'string' ? o : o[1]}]`);
      const end = await env.step('click[buy now]');
      expect(end.terminated).toBe(true);
      // the approximate tagger is exact here: the bought product is the goal's
      if (end.info.taskScore === 1) perfect++;
      else expect(end.info.rewardParts).toMatchObject({ r_type: 1 });
      expect(end.reward).toBe(end.info.taskScore === 1 ? 10 : 0);
      expect(end.observation.admissibleActions).toEqual(['search[<your query>]', 'click[search]']);
    }
    expect(found).toBeGreaterThan(goals.length * 0.9);
    expect(perfect).toBe(found);
  });

  it('truncates at maxSteps and rejects a step after the end', async () => {
    const env = createWebshopEnv({ shop, split: 'all', maxSteps: 2 });
    await env.reset({ seed: 1 });
    expect((await env.step('noop')).truncated).toBe(false);
    expect((await env.step('noop')).truncated).toBe(true);
    await expect(env.step('noop')).rejects.toSatisfy((e) => isAgentRLError(e, 'ENV_FINISHED'));
  });

  it('shows history in the prompt after the first step', async () => {
    const env = createWebshopEnv({ shop, split: 'all' });
    await env.reset({ seed: 0, task: 0 });
    await env.step('search[shirt]');
    const r = await env.step('click[next >]');
    expect(r.observation.text).toContain(
      'Prior to this step, you have already taken 2 step(s). Below are the most recent 2 observations',
    );
    expect(r.observation.text).toContain(
      "[Observation 1: ''Search'', Action 1: 'search[shirt]']\n[Observation 2: ",
    );
  });
});
