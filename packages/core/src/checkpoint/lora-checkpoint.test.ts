import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isAgentRLError } from '../errors.ts';
import { checkLoRABase, hashModelFiles, LORA_BASE_FILE, writeLoRABase } from './lora-checkpoint.ts';

const work = await mkdtemp(join(tmpdir(), 'agentrl-lora-base-'));
afterAll(() => rm(work, { recursive: true, force: true }));

async function baseAndCheckpoint(name: string): Promise<{ base: string; record: string }> {
  const base = join(work, name, 'base');
  const checkpoint = join(work, name, 'checkpoint');
  await mkdir(base, { recursive: true });
  await mkdir(checkpoint);
  await writeFile(join(base, 'config.json'), '{"vocab_size": 8}');
  await writeFile(join(base, 'model.safetensors'), 'weights');
  await writeFile(join(base, 'tokenizer.json'), '{}');
  await writeLoRABase(checkpoint, { path: base, files: await hashModelFiles(base) });
  return { base, record: join(checkpoint, LORA_BASE_FILE) };
}

const refused = (pattern: RegExp) => (e: unknown) =>
  isAgentRLError(e, 'BAD_DATA') && pattern.test(e.message);

describe('the base record of a LoRA checkpoint', () => {
  it('hashes the files that define the weights and reads back what was written', async () => {
    const { base, record } = await baseAndCheckpoint('same');
    const written = JSON.parse(await readFile(record, 'utf8'));
    expect(Object.keys(written.files)).toEqual(['config.json', 'model.safetensors']);
    expect(written.files['model.safetensors']).toMatch(/^[0-9a-f]{64}$/);
    expect(await checkLoRABase(record)).toEqual({ path: base, files: written.files });
  });

  it('refuses a base whose weight file changed, went missing or was added, naming the file', async () => {
    const changed = await baseAndCheckpoint('changed');
    await writeFile(join(changed.base, 'model.safetensors'), 'other weights');
    await expect(checkLoRABase(changed.record)).rejects.toSatisfy(
      refused(/model\.safetensors changed/),
    );
    const missing = await baseAndCheckpoint('missing');
    await rm(join(missing.base, 'model.safetensors'));
    await expect(checkLoRABase(missing.record)).rejects.toSatisfy(
      refused(/model\.safetensors is missing/),
    );
    const added = await baseAndCheckpoint('added');
    await writeFile(join(added.base, 'model-00002.safetensors'), 'shard');
    await expect(checkLoRABase(added.record)).rejects.toSatisfy(
      refused(/model-00002\.safetensors was added/),
    );
    const gone = await baseAndCheckpoint('gone');
    await rm(gone.base, { recursive: true });
    await expect(checkLoRABase(gone.record)).rejects.toSatisfy(
      refused(/base model folder .* does not exist/),
    );
  });

  it('refuses a record without a base folder or file hashes', async () => {
    const { record } = await baseAndCheckpoint('malformed');
    await writeFile(record, JSON.stringify({ path: '', files: {} }));
    await expect(checkLoRABase(record)).rejects.toSatisfy(refused(/needs "path".*and "files"/));
    await writeFile(record, 'not json');
    await expect(checkLoRABase(record)).rejects.toSatisfy(refused(/is not a LoRA base record/));
  });
});
