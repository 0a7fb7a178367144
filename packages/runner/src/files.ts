/**
 * Crash-safe file writes: every file the runner keeps is written to a temporary name in the same
 * folder and renamed over the target, so a killed process leaves the old or the new file, never
 * half of one.
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

let counter = 0;

function tempName(path: string): string {
  counter++;
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${counter}`);
}

/** Writes `data` to `path` atomically (temp file, fsync, rename). */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempName(path);
  await writeFile(tmp, data);
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  await rename(tmp, path);
}

/** Writes JSON to `path` atomically. */
export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Reads and parses a JSON file (the caller validates the shape). */
export async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, 'utf8')) as unknown;
}

/**
 * Fills a folder atomically: `fill` writes into a temporary folder beside `dir`, which is then
 * renamed to `dir` (replacing an older one).
 */
export async function writeDirAtomic(
  dir: string,
  fill: (tmp: string) => Promise<void>,
): Promise<void> {
  const tmp = tempName(dir);
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  await fill(tmp);
  await rm(dir, { recursive: true, force: true });
  await rename(tmp, dir);
}

/** Appends one line to a file and flushes it to disk. */
export function appendLineSync(path: string, line: string): void {
  const fd = openSync(path, 'a');
  try {
    writeSync(fd, `${line}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** SHA-256 of a file's bytes, hex. */
export function hashFileSync(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** SHA-256 of a file's bytes, hex, read as a stream (for files over 2 GiB, e.g. model weights). */
export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** SHA-256 of a string, hex. */
export function hashText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
