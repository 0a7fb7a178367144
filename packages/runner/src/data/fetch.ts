/**
 * `fetchDataset`: downloads a dataset's files (resumable, checked), unpacks them into a fresh
 * folder beside the target and only then renames it into place, so the target is either absent,
 * the old copy, or the complete new one — never half unpacked.
 *
 * Layout beside the target folder `D`: `.D.download/` holds the downloads (kept on failure, so the
 * next run resumes; removed after success), `.D.unpacking-PID/` the folder being filled.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { AgentRLError, ConfigError, DataError } from '@agentrl/core';
import { type DataDirContext, resolveDataDir, userDataRoot } from '@agentrl/core/data';
import { buildSearchQaFolder } from './build-search-qa.ts';
import {
  DATASET_NAMES,
  DATASETS,
  type DatasetFile,
  type DatasetName,
  type NamedDataset,
} from './datasets.ts';
import { type DownloadProgress, downloadFile } from './download.ts';
import { unpack } from './unpack.ts';

/** The file a finished fetch leaves in the dataset folder, describing what was fetched. */
export const FETCH_RECORD = '.agentrl-data.json';

/** Options of {@link fetchDataset}. */
export interface FetchDatasetOptions {
  /** The dataset folder; default {@link defaultDatasetDir}. */
  readonly dir?: string;
  /** The environment, platform and home folder the default folder is found from (tests inject them). */
  readonly context?: DataDirContext;
  /** Fetch every file from `<mirror>/<dataset>/<file name>` instead of upstream's address. */
  readonly mirror?: string;
  /** Replace a dataset folder that already exists. */
  readonly force?: boolean;
  readonly onProgress?: (progress: DownloadProgress) => void;
  /** Receives a sentence when something worth knowing happens (a resume, a restart, a reuse). */
  readonly onNote?: (message: string) => void;
  /** Passed to each download: give up when no data arrives for this long, in ms. */
  readonly idleTimeoutMs?: number;
}

/** One fetched file, as checked. */
export interface FetchedFile {
  readonly name: string;
  readonly url: string;
  readonly bytes: number;
  readonly sha256: string;
  /** Whether the sha256 was checked against a recorded one. */
  readonly pinned: boolean;
}

/** What a fetch did. */
export interface FetchedDataset {
  readonly name: string;
  readonly dir: string;
  readonly files: readonly FetchedFile[];
  /** Whether the environment package finds `dir` without being told. */
  readonly foundByDefault: boolean;
  /** A sentence saying how to point the environment package at `dir` (or that it needs nothing). */
  readonly hint: string;
}

/** The dataset of a command-line name; `BAD_CONFIG` naming the valid ones for another name. */
export function datasetOf(name: string): NamedDataset {
  if (!(DATASET_NAMES as readonly string[]).includes(name))
    throw new ConfigError(`dataset "${name}" is unknown; use one of ${DATASET_NAMES.join(', ')}`, {
      details: { field: 'dataset', value: name },
    });
  return { ...DATASETS[name as DatasetName], name: name as DatasetName };
}

/**
 * Where a dataset goes by default: `<root>/<folder>` of the user's data root, `$AGENTRL_DATA`
 * when set, else the platform's cache folder (`userDataRoot` of `@agentrl/core/data`), which is
 * where the environment packages look once nothing else names a folder.
 */
export function defaultDatasetDir(dataset: NamedDataset, context: DataDirContext = {}): string {
  return resolve(userDataRoot(context).root, dataset.folder);
}

/** The folder `agentrl data fetch` was told or chose, in words (for the line it prints first). */
function destination(dir: string | undefined, context: DataDirContext): string {
  if (dir !== undefined) return '--dir';
  return userDataRoot(context).from === 'AGENTRL_DATA'
    ? 'under AGENTRL_DATA'
    : 'the user cache folder; AGENTRL_DATA or --dir chooses another';
}

/** Whether the environment finds `dir` when told nothing, and if not, the sentence that says how. */
function envFinds(
  dataset: NamedDataset,
  dir: string,
  context: DataDirContext,
): { foundByDefault: boolean; hint: string } {
  if (!dataset.readByDefault || dataset.envVar === undefined)
    return { foundByDefault: false, hint: (dataset.pointAt ?? '').replaceAll('{dir}', dir) };
  const reads = resolveDataDir(
    { name: dataset.name, folder: dataset.folder, variable: dataset.envVar },
    context,
  );
  if (resolve(reads.dir) === dir)
    return { foundByDefault: true, hint: 'The environment finds it there by default.' };
  const set = `Set ${dataset.envVar}=${dir} so that the environment finds it`;
  const why =
    reads.from === 'variable'
      ? `: ${dataset.envVar} names ${reads.dir} now.`
      : reads.from === 'shared'
        ? `: without it, it reads ${reads.dir} (the source checkout's shared folder) first.`
        : '.';
  return { foundByDefault: false, hint: `${set}${why}` };
}

function fetchedBefore(dir: string): string | undefined {
  const path = join(dir, FETCH_RECORD);
  if (!existsSync(path)) return undefined;
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { fetchedAt?: string }).fetchedAt;
  } catch {
    return undefined;
  }
}

/**
 * Downloads, checks and unpacks a dataset (one of {@link DATASETS} by name, or a description of
 * the same shape); see the module comment for the guarantees.
 */
export async function fetchDataset(
  which: string | NamedDataset,
  options: FetchDatasetOptions = {},
): Promise<FetchedDataset> {
  const dataset = typeof which === 'string' ? datasetOf(which) : which;
  const context = options.context ?? {};
  const dir =
    options.dir !== undefined ? resolve(options.dir) : defaultDatasetDir(dataset, context);
  if (existsSync(dir) && readdirSync(dir).length > 0 && options.force !== true) {
    const when = fetchedBefore(dir);
    throw new ConfigError(
      `${dir} already exists${when !== undefined ? ` (fetched ${when})` : ' and is not empty'}; pass --force to replace it, or --dir to fetch into another folder`,
      { details: { field: 'dir', value: dir } },
    );
  }
  options.onNote?.(`fetching into ${dir} (${destination(options.dir, context)})`);
  const parent = dirname(dir);
  const downloads = join(parent, `.${basename(dir)}.download`);
  await mkdir(downloads, { recursive: true });
  const mirror = options.mirror?.replace(/\/+$/, '');
  const fetched: { file: DatasetFile; path: string; result: FetchedFile }[] = [];
  for (const file of dataset.files) {
    const url = mirror !== undefined ? `${mirror}/${dataset.name}/${file.name}` : file.url;
    const dest = join(downloads, file.name);
    if (existsSync(dest)) options.onNote?.(`${file.name}: already downloaded, checking it`);
    const done = await downloadFile({
      name: file.name,
      url,
      dest,
      ...(file.bytes !== undefined ? { bytes: file.bytes } : {}),
      ...(file.sha256 !== undefined ? { sha256: file.sha256 } : {}),
      ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
      ...(options.onNote !== undefined ? { onNote: options.onNote } : {}),
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    });
    fetched.push({
      file,
      path: done.path,
      result: { name: file.name, url, bytes: done.bytes, sha256: done.sha256, pinned: done.pinned },
    });
  }
  const staging = join(parent, `.${basename(dir)}.unpacking-${process.pid}`);
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  try {
    for (const { file, path } of fetched) {
      try {
        await unpack(path, file.unpack, staging, file.name);
      } catch (error) {
        if (!(error instanceof AgentRLError)) throw error;
        // A complete file that does not unpack cannot be resumed: the next run downloads it anew.
        await rm(path, { force: true });
        throw new DataError(
          `${error.message}; the downloaded file was removed: run again to download it afresh`,
          { cause: error, details: error.details },
        );
      }
    }
    if (dataset.build === 'search-qa') {
      const counts = await buildSearchQaFolder(staging);
      const questions = Object.entries(counts.questionsBySource)
        .map(([source, n]) => `${n} ${source}`)
        .join(', ');
      options.onNote?.(
        `built corpus.jsonl (${counts.corpusPassages} passages) and questions.jsonl (${questions})`,
      );
    }
    const missing = dataset.expect.filter((p) => !existsSync(join(staging, p)));
    if (missing.length > 0)
      throw new DataError(
        `${dataset.name}: the unpacked files lack ${missing.join(', ')}; the upstream files have changed shape (nothing was put in ${dir})`,
        { details: { dataset: dataset.name, missing } },
      );
    await writeFile(
      join(staging, FETCH_RECORD),
      `${JSON.stringify(
        {
          dataset: dataset.name,
          fetchedAt: new Date().toISOString(),
          files: fetched.map((f) => f.result),
        },
        null,
        2,
      )}\n`,
    );
    if (existsSync(dir)) {
      const old = join(parent, `.${basename(dir)}.replaced-${process.pid}`);
      await rename(dir, old);
      await rename(staging, dir);
      await rm(old, { recursive: true, force: true });
    } else {
      await rename(staging, dir);
    }
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  await rm(downloads, { recursive: true, force: true });
  return {
    name: dataset.name,
    dir,
    files: fetched.map((f) => f.result),
    ...envFinds(dataset, dir, context),
  };
}
