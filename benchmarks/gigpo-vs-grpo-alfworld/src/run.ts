/**
 * One job of the ALFWorld benchmark, run as its own process by `bench.ts` (the kit's job
 * protocol):
 *   run.ts --seed N --phase warm --out DIR         warm start, saved to DIR/seed-N/warm
 *   run.ts --seed N --phase gigpo|grpo --out DIR   RL from that warm start, to DIR/seed-N/<arm>.json
 *   run.ts --seed N --phase eval --out DIR         the warm start and both arms' final policies on
 *     480 held-out games, to DIR/seed-N/eval.json
 */
import { runJobCli } from '@agentrl-bench/gigpo-vs-grpo-kit';
import { BENCH } from './config.ts';

await runJobCli(BENCH);
