import {
  getEnvRegistration,
  type HistoryEntry,
  isAgentRLError,
  type Observation,
} from '@agentrl/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  COMPACT_RESULTS_SHOWN,
  type CompactResultsLayout,
  chosenOptions,
  createCompactPrompt,
  webshopCompactPrompt,
} from './compact-prompt.ts';
import { createWebshopEnv } from './create-env.ts';
import { expert } from './expert.ts';
import './register.ts';
import { Shop } from './shop.ts';

const shop = Shop.create({ catalogue: { kind: 'synthetic', size: 120, seed: 11 } });

/** The compact prompts of one expert episode on goal `seed`, with the actions taken after each. */
async function expertEpisode(
  seed: number,
  layout: CompactResultsLayout = 'title-first',
): Promise<{ prompts: string[]; actions: string[]; clickable: string[][] }> {
  const prompt = createCompactPrompt({ results: layout });
  const env = createWebshopEnv({ shop, split: 'all', maxSteps: 15 });
  const reset = await env.reset({ seed });
  let current: Observation = reset.observation;
  let info = reset.info;
  const history: HistoryEntry[] = [];
  const prompts: string[] = [];
  const actions: string[] = [];
  const clickable: string[][] = [];
  for (let stepIndex = 0; stepIndex < 15; stepIndex++) {
    const context = { initialObservation: reset.observation, history, current, stepIndex, info };
    prompts.push(prompt(context));
    clickable.push(
      (current.admissibleActions ?? []).flatMap(
        (a) => /^click\[([a-z0-9]{10})\]$/.exec(a)?.[1] ?? [],
      ),
    );
    const action = expert(context);
    actions.push(action);
    const step = await env.step(action);
    history.push({ observation: current, action });
    current = step.observation;
    info = step.info;
    if (step.terminated || step.truncated) break;
  }
  await env.close();
  return { prompts, actions, clickable };
}

describe('the compact WebShop prompt', () => {
  it('shows the task, the previous action and the page, a results page as its first products in order, in either layout', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 10_000 }),
        fc.constantFrom<CompactResultsLayout>('title-first', 'asin-first'),
        async (seed, layout) => {
          const { prompts, actions, clickable } = await expertEpisode(seed, layout);
          expect(prompts[0]).toMatch(/^task : .+\nprev : none\nnow : search$/);
          for (let t = 0; t < prompts.length; t++) {
            const prompt = prompts[t] as string;
            if (t > 0) expect(prompt).toContain(`\nprev : ${actions[t - 1]}\n`);
            const now = prompt.slice(prompt.indexOf('\nnow : ') + 7);
            if (now.startsWith('results ')) {
              const listed = now
                .slice(now.indexOf(' : ') + 3)
                .split(' | ')
                .map((entry) => entry.split(' ').at(layout === 'title-first' ? -1 : 0));
              expect(listed).toEqual(clickable[t]?.slice(0, COMPACT_RESULTS_SHOWN));
            }
            expect(prompt.split(/\s+/).length).toBeLessThan(200);
          }
        },
      ),
      { numRuns: 20 },
    );
  }, 0);

  it('lists the option values clicked since the product was opened, and forgets them on leaving it', () => {
    const opened = ['search[red shoes]', 'click[b0abcdefgh]'];
    expect(chosenOptions([...opened, 'click[red]', 'click[x-large]', 'click[red]'])).toEqual([
      'x-large',
      'red',
    ]);
    expect(chosenOptions([...opened, 'click[red]', 'click[description]'])).toEqual(['red']);
    expect(chosenOptions([...opened, 'click[red]', 'click[< prev]'])).toEqual([]);
    expect(chosenOptions([...opened, 'click[red]', 'search[blue shoes]'])).toEqual([]);
    expect(chosenOptions([])).toEqual([]);
  });

  it('writes an entry as `title $price asin` by default and `asin title $price` when asked, and refuses another layout', () => {
    const anchor =
      "'Back to Search' [SEP] 'Page 1 (Total results: 50)' [SEP] 'Next >' [SEP] 'B0ABCDEFGH' [SEP] 'Orchard Classic Shirt 17' [SEP] '$12.50'";
    const admissible = ['click[back to search]', 'click[next >]', 'click[b0abcdefgh]'];
    const context = {
      initialObservation: { text: '', anchor: '' },
      history: [],
      current: { text: '', anchor, admissibleActions: admissible },
      stepIndex: 1,
      info: { won: false, task: 'a shirt' },
    };
    expect(webshopCompactPrompt(context)).toContain(
      'now : results 1 : Classic Shirt $12 b0abcdefgh',
    );
    expect(createCompactPrompt({ results: 'asin-first' })(context)).toContain(
      'now : results 1 : b0abcdefgh Classic Shirt $12',
    );
    try {
      createCompactPrompt({ results: 'price-first' as CompactResultsLayout });
      expect.unreachable();
    } catch (e) {
      expect(isAgentRLError(e, 'BAD_INPUT')).toBe(true);
      expect(String(e)).toContain('price-first');
    }
  });

  it('is the registered "compact" prompt of both WebShop envs', () => {
    for (const id of ['webshop/text-v1', 'webshop/browser-v1'])
      expect(getEnvRegistration(id).prompts?.compact).toBe(webshopCompactPrompt);
  });
});
