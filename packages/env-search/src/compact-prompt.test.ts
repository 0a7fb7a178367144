import { getEnvRegistration, type HistoryEntry, makeEnv } from '@agentrl/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { passagesOf, searchCompactPrompt } from './compact-prompt.ts';
import { SEARCH_ENV_ID } from './env.ts';
import { expert } from './expert.ts';
import { formatInformation, formatNoResults } from './information.ts';
import './register.ts';

describe('the compact search prompt', () => {
  it('reads the passages of an information observation back as plain sentences', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.stringMatching(/^[a-z]{1,8}$/),
            fc.stringMatching(/^[a-z"\\][a-z .,"\\]{0,30}[a-z.]$/),
          ),
          { minLength: 1, maxLength: 3 },
        ),
        (docs) => {
          const shown = passagesOf(formatInformation(docs.map(([t, text]) => `${t}\n${text}`)));
          expect(shown).toBe(docs.map(([, text]) => text).join(' | '));
        },
      ),
    );
    expect(passagesOf(formatNoResults())).toBe('No search results found.');
    expect(passagesOf('Your answer is correct.')).toBe('Your answer is correct.');
  });

  it('shows the question, then the passages of the last search, along expert episodes', async () => {
    const env = await makeEnv(SEARCH_ENV_ID, { generator: { seed: 4 }, split: 'all' });
    for (let seed = 0; seed < 10; seed++) {
      const reset = await env.reset({ seed });
      let current = reset.observation;
      let info = reset.info;
      const history: HistoryEntry[] = [];
      for (let stepIndex = 0; stepIndex < 4; stepIndex++) {
        const context = {
          initialObservation: reset.observation,
          history,
          current,
          stepIndex,
          info,
        };
        const prompt = searchCompactPrompt(context);
        if (stepIndex === 0) expect(prompt).toBe(`question : ${reset.observation.text}`);
        else {
          const passage = passagesOf(current.text);
          expect(passage).not.toMatch(/<information>|Doc \d|\\n/);
          expect(prompt).toBe(`question : ${reset.observation.text}\ninfo : ${passage}`);
        }
        const action = expert(context);
        const step = await env.step(action);
        history.push({ observation: current, action });
        current = step.observation;
        info = step.info;
        if (step.terminated || step.truncated) break;
      }
      expect(info.won).toBe(true);
    }
    await env.close();
  });

  it('is the registered "compact" prompt of search/qa-v1', () => {
    expect(getEnvRegistration(SEARCH_ENV_ID).prompts?.compact).toBe(searchCompactPrompt);
  });
});
