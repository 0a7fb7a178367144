import { measureTfjs } from './tfjs-run.ts';
import { CONFIGS, WORKLOAD } from './workload.ts';

const which = process.argv[2] ?? 'small';
const backend = (process.argv[3] ?? 'wasm') as 'wasm';
const cfg = CONFIGS.find((c) => c.name === which);
if (cfg !== undefined) {
  const r = await measureTfjs(
    cfg,
    backend,
    WORKLOAD,
    3,
    Number(process.argv[4] ?? 0),
    'agentrl',
    Number(process.argv[5] ?? 0),
  );
  const trainTokens = WORKLOAD.batch * (WORKLOAD.trainPrompt + WORKLOAD.trainResponse);
  const genTokens = WORKLOAD.batch * WORKLOAD.genNew;
  console.log(which, backend, {
    trainPerCpuSecond: Math.round(trainTokens / (r.trainCpuSeconds ?? Number.NaN)),
    generatePerCpuSecond: Math.round(genTokens / (r.generateCpuSeconds ?? Number.NaN)),
    trainWall: Math.round(r.trainTokensPerSecond),
    generateWall: Math.round(r.generateTokensPerSecond),
  });
}
