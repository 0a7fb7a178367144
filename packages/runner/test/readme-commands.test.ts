/**
 * Every shell command in the repository's Markdown runs as written. Each command of a fenced
 * `sh` block (see `readme-commands.ts`) has an entry below: the ones that finish in seconds run
 * and must exit 0; the others are skipped with the reason. A command added to a README without
 * an entry, or an entry whose command left the READMEs, fails the first test.
 *
 * Commands run with bash from the repository root, with the block's earlier assignments (`T=...`)
 * before them, `agentrl` and `agentrl-search` on PATH as the packages' bins, and this Node first
 * on PATH. Two adjustments keep runs apart: paths under `/tmp/` point into a scratch folder, and
 * commands marked `scratch` run in a scratch folder that holds the real search-QA corpus as
 * `corpus.jsonl` (what the env-search README's `corpus.jsonl` stands for); without that corpus
 * (`agentrl data fetch search` gets it) they are skipped, with one printed line saying so.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dataPath, hasData } from '@agentrl/core/test';
import { afterAll, describe, expect, it } from 'vitest';
import { type ReadmeCommand, readmeCommands } from './readme-commands.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CORPUS = dataPath('search', 'corpus.jsonl');
const hasCorpus = hasData('search', 'runner: the README commands that run on the search corpus', {
  paths: [CORPUS],
});

type Entry = { readonly run: 'root' | 'scratch' } | { readonly skip: string };

const CI_ITSELF = 'part of the CI run that this test belongs to';
const PYTHON_SIDE = 'installs Debian packages for the Python comparison (root, network)';
const VERL_AGENT = 'needs a verl-agent checkout at the path given';
const TRL_EXAMPLE_ENV =
  "the TRL example's Python environment: about 6 GB from PyPI (PyTorch 2 with its CUDA libraries)";

/** Every README command: run it (from the root or a scratch folder), or skip it and say why. */
const ENTRIES: Readonly<Record<string, Entry>> = {
  'npm i -g pnpm@12': { skip: 'installs pnpm globally; CI does it in .ci/run' },
  'pnpm install': { skip: CI_ITSELF },
  'pnpm test': { skip: CI_ITSELF },
  'pnpm typecheck': { skip: CI_ITSELF },
  'pnpm lint': { skip: CI_ITSELF },
  'pnpm build': { skip: 'emits dist/ in every package; the tests run on the sources' },
  'pnpm bench': { skip: 'every benchmark, hours on 2 cores' },
  'bash .ci/run': { skip: CI_ITSELF },
  'pnpm docs:api': { skip: 'CI runs it (.ci/run); about 2 minutes of TypeDoc on 2 cores' },
  'pnpm changeset version': {
    skip: 'a release step: applies the pending changesets to versions and changelogs',
  },
  'pnpm check:packages': {
    skip: 'the same checks run in .ci/registry-check.sh, on the published tarballs',
  },
  'pnpm release': {
    skip: 'publishes to the npm registry; .ci/registry-check.sh publishes the same way to a local one',
  },
  'bash .ci/alfworld.sh': {
    skip: '.ci/run runs it before the tests (the first run installs the real ALFWorld from PyPI, minutes)',
  },
  'bash .ci/python.sh': {
    skip: 'CI runs it (.ci/run) after the TypeScript tests; its first run installs Python packages from PyPI',
  },
  'bash .ci/registry-check.sh': {
    skip: 'the last step of .ci/run (publishes to a local registry, installs from it)',
  },
  'pnpm install && pnpm demo': {
    skip: 'the full main job (agentrl train --preset alfworld-cpu), about 15 minutes on 2 cores',
  },
  'pnpm install && pnpm test': { skip: CI_ITSELF },
  'pnpm demo --smoke': { run: 'root' },
  'pnpm agentrl --help': { run: 'root' },
  'pnpm agentrl config list': { run: 'root' },
  'pnpm agentrl config show --preset alfworld-cpu': { run: 'root' },
  'pnpm agentrl train --preset alfworld-cpu --run-dir runs/alfworld-cpu': {
    skip: "the alfworld-cpu preset's full run (expert warm start, 32 GiGPO iterations, headline), about 15 minutes on 2 cores; src/presets-e2e.test.ts runs it at a tiny budget",
  },
  'pnpm agentrl eval --run-dir runs/alfworld-cpu': {
    skip: 'evaluates the latest checkpoint of the skipped train command above',
  },
  'pnpm agentrl report runs/alfworld-cpu': {
    skip: 'reads the run folder of the skipped train command above',
  },
  'pnpm agentrl sft --preset alfworld-cpu --run-dir runs/alfworld-sft': {
    skip: "the preset's warm start: 400 expert episodes and 480 SFT steps, minutes of CPU; src/presets-e2e.test.ts runs sft at a tiny budget",
  },
  'pnpm agentrl env serve --env alfworld --set env.options.source=generated': {
    skip: 'serves until stopped; src/env-serve.test.ts starts the same server on a free port',
  },
  'pnpm agentrl data fetch alfworld': {
    skip: 'downloads from the upstream host; src/data/fetch.test.ts runs it against a local server',
  },
  'pnpm --filter @agentrl/example-search-gigpo start': {
    skip: 'the full search-QA demo, minutes of CPU on 2 cores',
  },
  'pnpm --filter @agentrl/example-search-gigpo start --seed 3': {
    skip: 'the full search-QA demo on another seed, as long',
  },
  'pnpm --filter @agentrl/example-search-gigpo start --smoke': {
    skip: "examples/search-gigpo's own test runs the same smoke path",
  },
  'pnpm --filter @agentrl/example-webshop-gigpo start': {
    skip: 'the full WebShop demo, minutes of CPU on 2 cores',
  },
  'pnpm --filter @agentrl/example-webshop-gigpo start --smoke': {
    skip: "examples/webshop-gigpo's own test runs the same smoke path",
  },
  'apt-get install -y python3-torch python3-numpy libopenblas0-pthread': { skip: PYTHON_SIDE },
  'pnpm --filter @agentrl-bench/algorithms-advantages bench --verl-agent /path/to/verl-agent': {
    skip: VERL_AGENT,
  },
  'pnpm --filter @agentrl-bench/env-server bench': {
    skip: 'the load test at full size (1,000 sockets, about 40 s on 2 cores); its src/load.test.ts runs it with 40 sessions',
  },
  'pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench': {
    skip: 'the benchmark, about 42 minutes on 2 cores',
  },
  'BENCH_BUDGET=long pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench': {
    skip: 'the long budget, about 23 minutes on 2 cores',
  },
  'BENCH_SMOKE=1 pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench': {
    skip: 'about 30 s of training (the example smoke run below covers the same path)',
  },
  'pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --summary-only': {
    skip: 'reads runs/full, which only a full benchmark run writes',
  },
  'pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --arms grpo,gigpo-mean_norm': {
    skip: 'two arms of the benchmark, about half as long as the whole',
  },
  'BENCH_SET=iterations=16,valEvery=4 pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --out jobs/table-16 --seeds 100,101,102,103,104,105,106,107,108,109':
    { skip: 'the five-arm table on ten seeds, hours on 2 cores' },
  'BENCH_SET=iterations=16,valEvery=4 pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --out jobs/table-16 --seeds 100,101,102,103,104,105,106,107,108,109 --summary-only':
    {
      skip: 'summarizes the committed jobs of the table run (the package test reads the same files)',
    },
  'BENCH_BUDGET=table pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --out jobs/table-8 --seeds 100,101,102,103,104,105,106,107,108,109':
    { skip: 'the five-arm table on ten seeds at 8 iterations, hours on 2 cores' },
  'BENCH_BUDGET=table pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --out jobs/table-8 --seeds 100,101,102,103,104,105,106,107,108,109 --summary-only':
    { skip: 'summarizes the committed jobs of the 8-iteration table run' },
  'BENCH_BUDGET=table pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --arms grpo,gigpo-mean_std_norm --out jobs/replication-8 --seeds 110,111,112,113,114,115,116,117,118,119':
    { skip: "the table's GRPO and GiGPO arms on ten fresh seeds, over an hour on 2 cores" },
  'BENCH_BUDGET=table pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --summary-only --from jobs/table-8,jobs/replication-8 --out jobs/table-8-and-replication --arms grpo,gigpo-mean_std_norm --seeds 100,101,102,103,104,105,106,107,108,109,110,111,112,113,114,115,116,117,118,119':
    { skip: 'rewrites the committed summary of the table and its replication from their jobs' },
  'BENCH_BUDGET=regime pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --arms grpo,gigpo-mean_std_norm --out jobs/regime-search/r6-d4-t30 --seeds 90,91,92':
    {
      skip: 'one setting of the regime search, two arms on three seeds, an hour or more on 2 cores',
    },
  'BENCH_BUDGET=regime BENCH_SET=storageReceptacles=4,distractors=3,maxTurns=30 pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --arms grpo,gigpo-mean_std_norm --out jobs/regime-search/r4-d3-t30 --seeds 90,91,92':
    { skip: 'another setting of the regime search, as long as the one before' },
  'BENCH_BUDGET=table BENCH_SET=groups=16,groupSize=8 pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --arms grpo,gigpo-mean_std_norm --out jobs/regime-search/g16x8 --seeds 90,91':
    { skip: 'a setting of the regime search, two arms on two seeds, about 20 minutes on 2 cores' },
  'BENCH_BUDGET=table BENCH_SET=temperature=1 pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --arms grpo,gigpo-mean_std_norm --out jobs/regime-search/t1 --seeds 90,91,92,93':
    { skip: 'a setting of the regime search, two arms on four seeds, about 40 minutes on 2 cores' },
  'BENCH_BUDGET=table BENCH_SET=temperature=1 pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --arms grpo,gigpo-mean_std_norm --out jobs/t1-fresh --seeds 120,121,122,123,124,125,126,127,128,129':
    { skip: 'the chosen regime on ten fresh seeds, two arms, over an hour on 2 cores' },
  'BENCH_BUDGET=table BENCH_SET=temperature=1 pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --arms grpo,gigpo-mean_std_norm --summary-only --from jobs/t1-fresh --out jobs/t1-fresh-first-10 --seeds 120,121,122,123,124,125,126,127,128,129':
    { skip: 'rewrites the committed summary of the first ten fresh seeds from their jobs' },
  'BENCH_BUDGET=table BENCH_SET=temperature=1 pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --arms grpo,gigpo-mean_std_norm --summary-only --from jobs/t1-fresh --out jobs/t1-fresh-second-10 --seeds 130,131,132,133,134,135,136,137,138,139':
    { skip: 'rewrites the committed summary of the second ten fresh seeds from their jobs' },
  'BENCH_BUDGET=table BENCH_SET=temperature=1 pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --arms ppo,rloo,grpo,gigpo-mean_std_norm,gigpo-mean_norm --out jobs/t1-fresh --seeds 120,121,122,123,124,125,126,127,128,129':
    {
      skip: 'adds PPO, RLOO and GiGPO w/o std to the first ten fresh seeds, about 2.5 hours on 2 cores in all',
    },
  'BENCH_BUDGET=table BENCH_SET=temperature=1 pnpm --filter @agentrl-bench/gigpo-vs-grpo-alfworld bench --arms grpo,gigpo-mean_std_norm --out jobs/t1-fresh --seeds 120,121,122,123,124,125,126,127,128,129,130,131,132,133,134,135,136,137,138,139':
    { skip: 'the chosen regime on twenty fresh seeds, two arms, over two hours on 2 cores' },
  'pnpm --filter @agentrl-bench/gigpo-vs-grpo-webshop bench --arms grpo,gigpo-mean_norm': {
    skip: 'two arms of the WebShop benchmark, tens of minutes on 2 cores',
  },
  'pnpm --filter @agentrl-bench/gigpo-vs-grpo-webshop bench': {
    skip: 'the WebShop benchmark, tens of minutes on 2 cores',
  },
  'pnpm --filter @agentrl-bench/gigpo-vs-grpo-webshop bench --summary-only': {
    skip: 'reads runs/full, which only a full benchmark run writes',
  },
  'BENCH_BUDGET=table pnpm --filter @agentrl-bench/gigpo-vs-grpo-webshop bench --out jobs/table-8 --seeds 300,301,302,303,304,305,306,307,308,309':
    {
      skip: "the five-arm table on the demo's recipe at 8 iterations, ten seeds, hours on 2 cores",
    },
  'BENCH_BUDGET=table pnpm --filter @agentrl-bench/gigpo-vs-grpo-webshop bench --out jobs/table-8 --seeds 300,301,302,303,304,305,306,307,308,309 --summary-only':
    { skip: 'rewrites the committed summary of the WebShop table run from its jobs' },
  'BENCH_SMOKE=1 pnpm --filter @agentrl-bench/gigpo-vs-grpo-webshop bench': {
    skip: "the smoke run of all five seeds; the package's own test runs it on seed 0",
  },
  'pnpm --filter @agentrl-bench/gigpo-vs-grpo-search bench': {
    skip: 'the search-QA benchmark, 10 seeds: about an hour on 2 idle cores (estimated)',
  },
  'pnpm --filter @agentrl-bench/gigpo-vs-grpo-search bench --seeds 200,201': {
    skip: 'two seeds of the search-QA benchmark, about 15 minutes on 2 idle cores (estimated)',
  },
  'pnpm --filter @agentrl-bench/gigpo-vs-grpo-search bench --summary-only': {
    skip: 'reads runs/full, which only a full benchmark run writes',
  },
  'BENCH_BUDGET=long pnpm --filter @agentrl-bench/gigpo-vs-grpo-search bench': {
    skip: 'the long budget, three times the RL iterations: hours on 2 cores',
  },
  'BENCH_SMOKE=1 pnpm --filter @agentrl-bench/gigpo-vs-grpo-search bench --seeds 200 --out /tmp/search-smoke':
    { skip: "the package's own test (src/bench.test.ts) runs the same one-seed smoke run" },
  'pnpm --filter @agentrl-bench/model-gpu test': { skip: CI_ITSELF },
  'pnpm --filter @agentrl-bench/model-gpu bench --shapes tiny --python /usr/bin/python3 --json /tmp/tiny.json':
    { skip: 'needs PyTorch in /usr/bin/python3 and a GPU for the comparison' },
  'pnpm --filter @agentrl-bench/model-gpu dispatches [--only qwen2.5-0.5b] [--fused-off NAME,...] [--precision f32|mixed] [--json FILE]':
    {
      skip: 'a usage line (brackets are optional arguments); one shape takes minutes on software Vulkan',
    },
  'benchmarks/model-gpu/scripts/pack.sh': {
    skip: 'builds a 35 MB bundle for a GPU machine',
  },
  'tar xJf gpu-run.tar.xz': { skip: 'runs on the GPU machine, on the bundle pack.sh built' },
  'gpu-run/bench.sh --shapes full --python python3 --json results.json | tee results.md': {
    skip: 'runs on the GPU machine, on the bundle pack.sh built',
  },
  'pnpm --filter @agentrl-bench/model-throughput bench': {
    skip: 'the benchmark, minutes, and the PyTorch side',
  },
  'pnpm --filter @agentrl-bench/search-retriever bench': {
    skip: 'builds a 1M-passage index, minutes and 8 GB of heap',
  },
  'pnpm --filter @agentrl-bench/search-retriever bench --passages 0': {
    skip: 'the benchmark on the shipped corpus, about 35 s of repeated measurements',
  },
  'pnpm --filter @agentrl-bench/search-retriever bench --passages 0 --model /path/to/e5-base-v2-onnx':
    { skip: 'needs a local ONNX embedding model' },
  'pnpm --filter @agentrl-bench/webshop-env bench': { skip: 'the benchmark, minutes' },
  'pnpm --filter @agentrl-bench/rollout-engines bench': {
    skip: 'the benchmark: rollout phases of two engines, minutes',
  },
  'pnpm --filter @agentrl-bench/rollout-engines bench --checkpoint DIR': {
    skip: 'the benchmark on a checkpoint folder of the reader (DIR), minutes',
  },
  'pnpm --filter @agentrl-bench/rollout-engines bench --hidden 256 --layers 4': {
    skip: 'the benchmark on a larger decoder, minutes',
  },
  'pnpm --filter @agentrl-bench/webshop-env bench --quick': {
    skip: 'about 20 s of measurements with Chromium',
  },
  'pnpm --filter @agentrl/example-alfworld-eval-openai start --base-url http://127.0.0.1:8000/v1 --model-name Qwen/Qwen2.5-1.5B-Instruct':
    { skip: 'needs a served model at that URL (the example test uses a local wire-format server)' },
  'pnpm --filter @agentrl/example-alfworld-gigpo start': {
    skip: 'the full main job, about 6 minutes of CPU on 2 cores',
  },
  'pnpm --filter @agentrl/example-alfworld-gigpo start --smoke': { run: 'root' },
  'pnpm --filter @agentrl/example-gigpo-advantages start': { run: 'root' },
  'agentrl-search index --corpus corpus.jsonl --out ./index': { run: 'scratch' },
  'agentrl-search query --index ./index --top-k 3 "who directed Doctor Strange"': {
    run: 'scratch',
  },
  'agentrl-search serve --index ./index --port 8000': { skip: 'a server: runs until stopped' },
  'agentrl-search index --kind dense --model ./e5-base-v2-onnx --corpus wiki.jsonl --out ./dense-index':
    { skip: 'needs a local ONNX embedding model and a corpus' },
  'agentrl-search serve --index ./dense-index --model ./e5-base-v2-onnx': {
    skip: 'a server, on the dense index above',
  },
  'packages/model-tfjs/scripts/pack-gpu-run.sh packages/model-tfjs/scripts/gpu-check.ts /tmp/gpu-run':
    { skip: 'builds a bundle for a GPU machine' },
  "scp /tmp/gpu-run.tar.xz gpu-host: && ssh gpu-host 'tar xJf gpu-run.tar.xz && gpu-run/run.sh [model-dir]'":
    { skip: 'copies to and runs on a GPU host' },
  'agentrl train -c run.yaml --set rollout.temperature=0.7 --seed 1': {
    skip: 'run.yaml stands for your config (the preset run below is the runnable one)',
  },
  'agentrl train --resume --run-dir runs/x': {
    skip: 'runs/x stands for your run folder; src/run-folder.test.ts resumes one',
  },
  'agentrl eval --checkpoint runs/x/checkpoints/iter-000020 --split valid_unseen': {
    skip: 'runs/x stands for your run; src/run-folder.test.ts evaluates a checkpoint given alone',
  },
  'agentrl config show --preset alfworld-cpu > run.yaml': {
    skip: 'writes run.yaml where it is run; src/cli-config.test.ts reads the printed config back',
  },
  'agentrl eval -c run.yaml --base-url http://127.0.0.1:8000/v1 --model-name Qwen2.5-1.5B-Instruct':
    { skip: 'needs a served model at that URL' },
  'agentrl sft -c run.yaml': { skip: 'run.yaml stands for your config' },
  'agentrl report runs/x': { skip: 'runs/x stands for your run folder' },
  'agentrl report runs/s*/gigpo runs/s*/grpo -o cmp.html': {
    skip: 'runs/s*/gigpo and runs/s*/grpo stand for your run folders',
  },
  'agentrl report gigpo=runs/a grpo=runs/b -o cmp.html': {
    skip: 'runs/a and runs/b stand for your run folders',
  },
  'pnpm agentrl env serve --env alfworld --port 8000 --set env.options.split=valid_seen': {
    skip: 'serves until stopped; python/agentrl-env/tests start the same server from the checkout',
  },
  'pip install ./python/agentrl-env': {
    skip: "installs into the reader's Python; .ci/python.sh builds the same package's wheel and installs it in its own venv",
  },
  'python3 -m venv ~/.cache/agentrl/trl-venv': { skip: TRL_EXAMPLE_ENV },
  '~/.cache/agentrl/trl-venv/bin/pip install -r python/requirements-trl.txt ./python/agentrl-env': {
    skip: TRL_EXAMPLE_ENV,
  },
  'pnpm agentrl env serve --env alfworld --port 8000 --set env.options.source=generated --set env.options.generator.storageReceptacles=2 --set env.options.generator.distractors=1 --set env.options.generator.extraTargets=0 --set env.options.maxSteps=10':
    {
      skip: 'serves until stopped; python/agentrl-env/tests/test_trl_example.py starts the same server on a free port',
    },
  '~/.cache/agentrl/trl-venv/bin/python python/agentrl-env/examples/trl_grpo_alfworld.py --url http://127.0.0.1:8000':
    {
      skip: "needs the TRL example's environment and the server above; python/agentrl-env/tests/test_trl_example.py runs it",
    },
  'AGENTRL_PYTHON_REQUIREMENTS=python/requirements-trl.txt bash .ci/python.sh': {
    skip: TRL_EXAMPLE_ENV,
  },
  'agentrl env serve --env alfworld --port 8001 --set env.options.split=valid_seen': {
    skip: 'serves until stopped; src/env-serve.test.ts starts the same server on a free port',
  },
  'agentrl serve --checkpoint runs/x/checkpoints/iter-000010 --port 8000': {
    skip: 'serves until stopped; src/serve.test.ts starts the same server on a free port',
  },
  'VLLM_ALLOW_RUNTIME_LORA_UPDATING=True vllm serve Qwen/Qwen2.5-0.5B-Instruct --port 8000 --enable-lora --max-lora-rank 8 --max-loras 2 --logprobs-mode processed_logprobs':
    { skip: 'needs vLLM and a GPU, which CI does not have' },
  'agentrl data fetch alfworld': {
    skip: 'downloads from the upstream host; src/data/fetch.test.ts runs it against a local server',
  },
  'agentrl train --help': { run: 'root' },
  'pnpm agentrl train --preset alfworld-cpu --run-dir /tmp/cpu-preset --iterations 3 $T': {
    run: 'root',
  },
  'pnpm agentrl sft --preset alfworld-cpu --run-dir /tmp/cpu-preset --set sft.episodes=16 --set sft.steps=40 --set sft.batchSize=16':
    { skip: 'about 35 s of supervised training' },
  'pnpm agentrl train --preset alfworld-cpu --run-dir /tmp/cpu-preset-rl --iterations 3 $T --set warmStart.source=checkpoint --set warmStart.checkpoint=/tmp/cpu-preset/sft/model':
    { skip: 'starts from the model of the skipped sft command above' },
  'pnpm agentrl eval --preset alfworld-cpu --run-dir /tmp/cpu-preset --checkpoint /tmp/cpu-preset/checkpoints/iter-000003 --episodes 8 --set rollout.maxTurns=6':
    { run: 'root' },
  'pnpm agentrl report /tmp/cpu-preset': { run: 'root' },
  'pnpm agentrl config show -c examples/configs/webshop.yaml': { run: 'root' },
  'pnpm agentrl train -c examples/configs/alfworld.yaml --iterations 2 --run-dir /tmp/cfg': {
    skip: "the alfworld-cpu preset's budget but 2 iterations (400 expert episodes, 480 SFT steps, three evaluations on 480 games), longer than a test should take; the smoke-budget command below runs the same file",
  },
  'pnpm agentrl train -c examples/configs/alfworld.yaml --iterations 2 --run-dir /tmp/cfg-tiny $T':
    { run: 'root' },
  'pnpm agentrl train -c examples/configs/search.yaml --run-dir runs/search-cpu': {
    skip: "the search-cpu preset's full run, minutes of CPU; src/presets-search.test.ts runs the preset at a tiny budget",
  },
  'pnpm docs:config': {
    skip: 'rewrites docs/config-reference.md; test/config-reference.test.ts generates the same text and compares it with the committed file',
  },
  ...presetRunEntries('webshop-cpu', 20, 'WebShop'),
  ...presetRunEntries('search-cpu', 800, 'search-QA'),
  ...tarballInstallEntries(),
};

/**
 * The two commands of each package README's Install section, for as long as the packages are not
 * on npm: pack the package and its `@agentrl` dependencies in the clone, install the tarballs in
 * a project beside it (the runner's lists the packages it needs; the others, all they pack).
 */
function tarballInstallEntries(): Record<string, Entry> {
  const tarballs: Record<string, readonly string[]> = {
    core: ['core'],
    'env-conformance': ['core', 'env-conformance'],
    algorithms: ['core', 'algorithms'],
    'env-alfworld': ['core', 'env-alfworld'],
    'env-webshop': ['core', 'env-webshop'],
    'env-search': ['core', 'env-search'],
    'env-server': ['core', 'env-server'],
    'model-tfjs': ['core', 'algorithms', 'model-tfjs'],
    'model-openai': ['core', 'model-openai'],
    'engine-llamacpp': ['core', 'engine-llamacpp'],
    runner: [
      'core',
      'algorithms',
      'env-alfworld',
      'env-server',
      'env-webshop',
      'model-openai',
      'runner',
    ],
  };
  const entries: Record<string, Entry> = {};
  for (const [name, packed] of Object.entries(tarballs)) {
    const npm = name === 'env-conformance' ? 'npm i -D' : 'npm i';
    const files =
      packed.length === 1 ? `agentrl-${packed[0]}-*.tgz` : `agentrl-{${packed.join(',')}}-*.tgz`;
    entries[
      `pnpm --filter-prod "@agentrl/${name}..." pack --pack-destination ../agentrl-tarballs`
    ] = {
      skip: 'builds dist/ and writes tarballs beside the checkout; .ci/registry-check.sh packs, publishes and checks every package the same way',
    };
    entries[`${npm} ../agentrl-tarballs/${files}`] = {
      skip: 'installs into a project beside the clone, from the tarballs the pack command writes; .ci/registry-check.sh installs each package alone from its tarball',
    };
  }
  return entries;
}

/** The two commands of a CPU preset's full run in the runner README (minutes of CPU each). */
function presetRunEntries(preset: string, iterations: number, name: string): Record<string, Entry> {
  const dir = `runs/${preset}`;
  const checkpoint = `${dir}/checkpoints/iter-${String(iterations).padStart(6, '0')}`;
  const tested = `src/presets-${preset.split('-')[0]}.test.ts runs it at a tiny budget`;
  return {
    [`pnpm agentrl train --preset ${preset} --run-dir ${dir}`]: {
      skip: `the ${name} preset's full run (expert warm start, GiGPO, headline), minutes of CPU; ${tested}`,
    },
    [`pnpm agentrl eval --preset ${preset} --run-dir ${dir} --checkpoint ${checkpoint}`]: {
      skip: 'evaluates the checkpoint of the skipped train command above',
    },
  };
}

const commands = readmeCommands(ROOT);
const scratchRoot = mkdtempSync(join(tmpdir(), 'agentrl-readme-'));
afterAll(() => rmSync(scratchRoot, { recursive: true, force: true }));

/** A folder with `agentrl` and `agentrl-search` as the workspace bins (what an install links). */
function binFolder(): string {
  const dir = join(scratchRoot, 'bin');
  const bins = {
    agentrl: join(ROOT, 'packages/runner/bin/agentrl.js'),
    'agentrl-search': join(ROOT, 'packages/env-search/bin/agentrl-search.js'),
  };
  for (const [name, target] of Object.entries(bins)) {
    const path = join(dir, name);
    if (existsSync(path)) continue;
    mkdirSync(dir, { recursive: true });
    writeFileSync(path, `#!/bin/sh\nexec node "${target}" "$@"\n`);
    chmodSync(path, 0o755);
  }
  return dir;
}

/** The scratch folder of one fenced block (shared by its commands, in order). */
function blockFolder(command: ReadmeCommand): string {
  const dir = join(scratchRoot, `${command.file.replace(/[/.]/g, '_')}-${command.block}`);
  if (!existsSync(dir)) {
    mkdirSync(join(dir, 'tmp'), { recursive: true });
    if (hasCorpus) copyFileSync(CORPUS, join(dir, 'corpus.jsonl'));
  }
  return dir;
}

function runCommand(command: ReadmeCommand, where: 'root' | 'scratch') {
  const folder = blockFolder(command);
  const script = [...command.setup, command.text].join('\n').replaceAll('/tmp/', `${folder}/tmp/`);
  return spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: where === 'root' ? ROOT : folder,
    encoding: 'utf8',
    env: {
      ...process.env,
      PATH: `${dirname(process.execPath)}:${binFolder()}:${process.env.PATH ?? ''}`,
    },
    maxBuffer: 64 * 1024 * 1024,
  });
}

describe('README commands', () => {
  it('has an entry for every shell command in the READMEs, and no entry for a command that left them', () => {
    const keys = new Set(commands.map((c) => c.key));
    const missing = commands.filter((c) => !(c.key in ENTRIES)).map((c) => `${c.file}: ${c.key}`);
    const stale = Object.keys(ENTRIES).filter((k) => !keys.has(k));
    expect(missing, 'add these to ENTRIES (run or skip with a reason)').toEqual([]);
    expect(stale, 'remove these from ENTRIES').toEqual([]);
  });

  // Commands too slow for a test, or that need what CI lacks (a GPU, a served model, a
  // verl-agent checkout), are not run: each has its reason in ENTRIES, checked and listed here.
  it('gives a reason for every command it does not run', () => {
    const notRun = commands.flatMap((c) => {
      const entry = ENTRIES[c.key];
      return entry !== undefined && 'skip' in entry ? [{ command: c.key, reason: entry.skip }] : [];
    });
    expect(notRun.filter((n) => n.reason.trim().length < 10)).toEqual([]);
    console.info(
      `README commands not run (${notRun.length}):\n${notRun.map((n) => `  ${n.command}: ${n.reason}`).join('\n')}`,
    );
  });

  for (const command of commands) {
    const entry = ENTRIES[command.key];
    if (entry === undefined || 'skip' in entry) continue;
    const name = `${command.file}: ${command.key}`;
    // The limit is sized for the slowest CI machine; each of these takes seconds here.
    it.skipIf(entry.run === 'scratch' && !hasCorpus)(
      `${name} exits 0`,
      () => {
        const r = runCommand(command, entry.run);
        expect(r.status, `${r.stdout.slice(-2000)}\n${r.stderr.slice(-4000)}`).toBe(0);
      },
      600_000,
    );
  }
});
