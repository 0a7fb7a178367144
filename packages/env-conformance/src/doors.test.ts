import { createDoorsEnv, DOORS_ENV_ID, doorsParser } from '@agentrl/core/test';
import { describeEnvConformance } from './index.ts';

// The trainers' learning-check environment passes the kit as well.
describeEnvConformance(() => createDoorsEnv({ rooms: 2 }), {
  name: DOORS_ENV_ID,
  parser: doorsParser,
  resets: [{ seed: 0 }, { seed: 5 }],
});
