/**
 * One job of the search-QA benchmark, run as its own process by `bench.ts` (the kit's job
 * protocol):
 *   run.ts --seed N --phase warm --out DIR          warm start, saved to DIR/seed-N/warm
 *   run.ts --seed N --phase ARM --out DIR           RL from that warm start (ARM one of the kit's
 *     ARMS; this benchmark's are grpo and gigpo-sim0.9), to DIR/seed-N/<ARM>.json
 *   run.ts --seed N --phase eval --arms A,B --out DIR   the warm start and the named arms' final
 *     policies on 480 held-out questions, to DIR/seed-N/eval.json
 */
import { runJobCli } from '@agentrl-bench/gigpo-vs-grpo-kit';
import { BENCH } from './config.ts';

await runJobCli(BENCH);
