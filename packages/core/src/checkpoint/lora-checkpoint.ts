/**
 * The files of a LoRA checkpoint folder: the adapters (`lora.safetensors`, written by
 * `@agentrl/model-tfjs`'s training state) and the record of the base they apply to
 * (`lora-base.json`): the absolute base folder and the SHA-256 of each file that defines its
 * weights. A resume checks that the folder still holds the same files before it applies the
 * adapters; a rollout engine reads the record to load the base once and only the adapters after.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DataError } from '../errors.ts';

/**
 * File of a LoRA checkpoint holding the adapters: per adapted projection `<weight>.lora_A`
 * `[in, r]` and `<weight>.lora_B` `[r, out]` (F32, the update is `x·A·B`; `<weight>` is the HF
 * weight name without `.weight`), with the rank, α and targets in its metadata.
 */
export const LORA_STATE_FILE = 'lora.safetensors';

/** File of a LoRA checkpoint naming the base folder its adapters apply to, with file hashes. */
export const LORA_BASE_FILE = 'lora-base.json';

/** The base a LoRA checkpoint's adapters apply to: absolute folder and SHA-256 per file. */
export interface LoRABase {
  readonly path: string;
  readonly files: Readonly<Record<string, string>>;
}

/** SHA-256 of a file, hex, read as a stream (a base's weight file may be over 2 GiB). */
async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * SHA-256 of the files of a model folder that define its weights (`config.json`, the safetensors
 * and their index).
 */
export async function hashModelFiles(dir: string): Promise<Record<string, string>> {
  const names = readdirSync(dir)
    .filter(
      (n) =>
        n === 'config.json' || n.endsWith('.safetensors') || n.endsWith('.safetensors.index.json'),
    )
    .sort();
  const out: Record<string, string> = {};
  for (const name of names) out[name] = await hashFile(join(dir, name));
  return out;
}

/** Writes `base` as `lora-base.json` in `dir` (temporary name, then rename). */
export async function writeLoRABase(dir: string, base: LoRABase): Promise<void> {
  const path = join(dir, LORA_BASE_FILE);
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, `${JSON.stringify(base, null, 2)}\n`);
  await rename(tmp, path);
}

function isLoRABase(value: unknown): value is LoRABase {
  if (value === null || typeof value !== 'object') return false;
  const { path, files } = value as { path?: unknown; files?: unknown };
  return (
    typeof path === 'string' &&
    path.length > 0 &&
    files !== null &&
    typeof files === 'object' &&
    !Array.isArray(files) &&
    Object.values(files as object).every((h) => typeof h === 'string')
  );
}

/**
 * Reads a checkpoint's `lora-base.json` and checks that its base folder still holds the same
 * files; a changed, missing or added weight file is refused with a `DataError` naming it.
 */
export async function checkLoRABase(file: string): Promise<LoRABase> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new DataError(`${file} is not a LoRA base record: ${(error as Error).message}`, {
      details: { path: file },
    });
  }
  if (!isLoRABase(parsed)) {
    throw new DataError(
      `${file} is not a LoRA base record: it needs "path" (the base folder) and "files" (name → sha256)`,
      { details: { path: file } },
    );
  }
  const { path, files } = parsed;
  const fix =
    "the checkpoint's LoRA adapters apply to the base the run started from: restore it, or start a new run";
  if (!existsSync(path)) {
    throw new DataError(`${file}: base model folder ${path} does not exist; ${fix}`, {
      details: { path },
    });
  }
  const now = await hashModelFiles(path);
  for (const name of new Set([...Object.keys(files), ...Object.keys(now)])) {
    const then = files[name];
    const current = now[name];
    if (then === current) continue;
    const what =
      then === undefined
        ? 'was added'
        : current === undefined
          ? 'is missing'
          : `changed (sha256 ${then.slice(0, 12)}… at the checkpoint, ${current.slice(0, 12)}… now)`;
    throw new DataError(
      `base model file ${join(path, name)} ${what} since the checkpoint; ${fix}`,
      {
        details: { path: join(path, name) },
      },
    );
  }
  return { path, files };
}
