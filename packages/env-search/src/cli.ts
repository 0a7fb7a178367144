/**
 * The `agentrl-search` command: `index` builds an index folder, `query` prints the top passages
 * of a question (to check an index), `serve` runs the Search-R1-compatible retrieval server.
 */
import { parseArgs } from 'node:util';
import { dropArgsSeparator, isAgentRLError } from '@agentrl/core';
import { buildIndex, openRetriever } from './index-store.ts';
import { formatInformation } from './information.ts';
import { type RetrievalServer, serve } from './server.ts';
import type { TokenizerOptions } from './tokenizer.ts';

/** Where the CLI writes. */
export interface CliIO {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

const USAGE = `usage:
  agentrl-search index --corpus <corpus.jsonl> --out <dir> [--stop-words english|none] [--stemming porter2|s-stemmer|none] [--k1 1.2] [--b 0.75] [--k 1]
  agentrl-search index --kind dense --model <model folder> --corpus <corpus.jsonl> --out <dir>
  agentrl-search query --index <dir> [--model <folder>] [--top-k 3] [--json] <question>
  agentrl-search serve --index <dir> [--model <folder>] [--port 8000] [--host 127.0.0.1] [--top-k 3]
`;

function numberOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n))
    throw new UsageError(`--${name} must be a number, got ${JSON.stringify(value)}`);
  return n;
}

class UsageError extends Error {}

function modelOption(model: string | undefined): { model?: { modelDir: string } } {
  return model === undefined ? {} : { model: { modelDir: model } };
}

/**
 * Runs one CLI command. Resolves to the exit code, or, for `serve`, to the running server
 * (the caller stops it).
 */
export async function runSearchCli(
  argv: readonly string[],
  io: CliIO,
): Promise<number | RetrievalServer> {
  const [command, ...rest] = dropArgsSeparator(argv);
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        corpus: { type: 'string' },
        kind: { type: 'string' },
        model: { type: 'string' },
        out: { type: 'string' },
        index: { type: 'string' },
        'top-k': { type: 'string' },
        json: { type: 'boolean' },
        port: { type: 'string' },
        host: { type: 'string' },
        'stop-words': { type: 'string' },
        stemming: { type: 'string' },
        k1: { type: 'string' },
        b: { type: 'string' },
        k: { type: 'string' },
      },
    });
    const topK = numberOption('top-k', values['top-k']) ?? 3;
    switch (command) {
      case 'index': {
        if (values.corpus === undefined || values.out === undefined)
          throw new UsageError('index needs --corpus and --out');
        const tokenizer: Partial<TokenizerOptions> = {};
        const stopWords = values['stop-words'];
        if (stopWords !== undefined) {
          if (stopWords !== 'english' && stopWords !== 'none')
            throw new UsageError('--stop-words must be english or none');
          Object.assign(tokenizer, { stopWords });
        }
        const stemming = values.stemming;
        if (stemming !== undefined) {
          if (stemming !== 'porter2' && stemming !== 's-stemmer' && stemming !== 'none')
            throw new UsageError('--stemming must be porter2, s-stemmer or none');
          Object.assign(tokenizer, { stemming });
        }
        const bm25: Record<string, number> = {};
        for (const key of ['k1', 'b', 'k'] as const) {
          const v = numberOption(key, values[key]);
          if (v !== undefined) bm25[key] = v;
        }
        const started = performance.now();
        const logger = { info: (m: string) => io.stderr(`${m}\n`) };
        if (values.kind === 'dense') {
          if (values.model === undefined)
            throw new UsageError('index --kind dense needs --model <folder>');
          const dense = await buildIndex({
            kind: 'dense',
            corpus: values.corpus,
            out: values.out,
            model: { modelDir: values.model },
            logger,
          });
          await dense.index.encoder.close();
          io.stdout(
            `embedded ${dense.manifest.corpus.passages} passages in ${((performance.now() - started) / 1000).toFixed(2)} s -> ${values.out}\n`,
          );
          return 0;
        }
        if (values.kind !== undefined && values.kind !== 'bm25')
          throw new UsageError('--kind must be bm25 or dense');
        const built = await buildIndex({
          corpus: values.corpus,
          out: values.out,
          tokenizer,
          bm25,
          logger,
        });
        io.stdout(
          `indexed ${built.manifest.corpus.passages} passages in ${((performance.now() - started) / 1000).toFixed(2)} s -> ${values.out}\n`,
        );
        return 0;
      }
      case 'query': {
        if (values.index === undefined || positionals.length === 0)
          throw new UsageError('query needs --index and a question');
        const { retriever } = await openRetriever(values.index, modelOption(values.model));
        try {
          const hits = (await retriever.search([positionals.join(' ')], topK))[0] ?? [];
          if (values.json === true) io.stdout(`${JSON.stringify(hits, null, 2)}\n`);
          else {
            hits.forEach((hit, i) => {
              io.stdout(
                `${i + 1}. [${hit.id}] score ${hit.score.toFixed(3)}  ${hit.contents.split('\n')[0] ?? ''}\n`,
              );
            });
            io.stdout(`\n${formatInformation(hits.map((h) => h.contents))}\n`);
          }
        } finally {
          await retriever.close();
        }
        return 0;
      }
      case 'serve': {
        if (values.index === undefined) throw new UsageError('serve needs --index');
        const { retriever, passages } = await openRetriever(
          values.index,
          modelOption(values.model),
        );
        const server = await serve({
          retriever,
          port: numberOption('port', values.port) ?? 8000,
          host: values.host ?? '127.0.0.1',
          defaultTopK: topK,
        });
        io.stderr(`serving ${passages} passages on ${server.url}\n`);
        return server;
      }
      default:
        io.stderr(USAGE);
        return command === undefined || command === '--help' || command === 'help' ? 0 : 2;
    }
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error)) {
      io.stderr(`agentrl-search: ${error.message}\n${USAGE}`);
      return 2;
    }
    if (isAgentRLError(error)) {
      io.stderr(`agentrl-search: ${error.code}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
