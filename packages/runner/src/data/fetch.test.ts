/**
 * `fetchDataset` and `agentrl data fetch` against a local HTTP server (node:http on 127.0.0.1)
 * that serves small archives made here: success, resume after a cut-off body, a server that
 * ignores Range, a checksum mismatch, a 404, an unreachable host, an HTML page for a file, a
 * refused archive entry, and an existing folder. Each test bounds the requests the server saw.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { isAgentRLError } from '@agentrl/core';
import { strToU8, zipSync } from 'fflate';
import { create as createTar } from 'tar';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../../test/cli.ts';
import { tempDir } from '../../test/temp-dir.ts';
import { DATASETS, type NamedDataset } from './datasets.ts';
import { defaultDatasetDir, FETCH_RECORD, fetchDataset } from './fetch.ts';

/** What the server does with a request for one path. */
type Behaviour = 'serve' | 'cut-first' | 'ignore-range' | 'html';

interface TestServer {
  readonly base: string;
  /** Every request seen: its path and Range header. */
  readonly requests: { path: string; range: string | undefined }[];
  set(path: string, body: Uint8Array, behaviour?: Behaviour): void;
  close(): Promise<void>;
}

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A server on 127.0.0.1 (port 0) serving bodies by path, with Range support. */
async function startServer(): Promise<TestServer> {
  const files = new Map<string, { body: Uint8Array; behaviour: Behaviour; served: number }>();
  const requests: { path: string; range: string | undefined }[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ path, range: req.headers.range });
    const file = files.get(path);
    if (file === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
      return;
    }
    file.served++;
    if (file.behaviour === 'html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!DOCTYPE html><p>quota</p>');
      return;
    }
    const body = Buffer.from(file.body);
    const m = req.headers.range?.match(/^bytes=(\d+)-$/);
    if (m && file.behaviour !== 'ignore-range') {
      const start = Number(m[1]);
      res.writeHead(206, {
        'content-type': 'application/octet-stream',
        'content-length': body.length - start,
        'content-range': `bytes ${start}-${body.length - 1}/${body.length}`,
        etag: '"v1"',
      });
      res.end(body.subarray(start));
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': body.length,
      etag: '"v1"',
    });
    if (file.behaviour === 'cut-first' && file.served === 1) {
      // Half the body, then the connection drops.
      res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.destroy());
      return;
    }
    res.end(body);
  };
  const server: Server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const s: TestServer = {
    base: `http://127.0.0.1:${port}`,
    requests,
    set: (path, body, behaviour = 'serve') => files.set(path, { body, behaviour, served: 0 }),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  servers.push(s);
  return s;
}

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** A zip in ALFWorld's layout: one game per split, plus some incompressible bytes. */
function alfworldZip(): Uint8Array {
  const noise = new Uint8Array(200_000);
  // Deterministic, poorly compressible filler (a linear congruential sequence).
  let x = 12345;
  for (let i = 0; i < noise.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    noise[i] = x >>> 24;
  }
  const game = (split: string) =>
    strToU8(JSON.stringify({ split, walkthrough: ['go to desk 1'], solvable: true }));
  return zipSync({
    'json_2.1.1/': {},
    'json_2.1.1/train/pick_and_place_simple-Pen-None-Desk-301/trial_1/game.tw-pddl': game('train'),
    'json_2.1.1/valid_seen/look_at_obj_in_light-Book-None-DeskLamp-302/trial_2/game.tw-pddl':
      game('valid_seen'),
    'json_2.1.1/valid_unseen/pick_two_obj_and_place-Cup-None-Shelf-303/trial_3/game.tw-pddl':
      game('valid_unseen'),
    'json_2.1.1/noise.bin': [noise, { level: 0 }],
  });
}

/** A one-file dataset description served from `base`, as the CLI's manifests are written. */
function oneFileDataset(
  base: string,
  file: Partial<NamedDataset['files'][number]> & { name: string },
): NamedDataset {
  return {
    name: 'tiny',
    title: 'a test dataset',
    folder: 'tiny',
    envVar: 'AGENTRL_TEST_TINY_DATA',
    readByDefault: true,
    usedBy: 'these tests',
    size: 'small',
    expect: [],
    files: [
      {
        url: `${base}/tiny/${file.name}`,
        source: 'made in the test',
        unpack: { kind: 'file', to: file.name },
        ...file,
      },
    ],
  };
}

/** The folder's entries (hidden ones included), to check that nothing was left behind. */
const entries = (dir: string) => readdirSync(dir).sort();

describe('agentrl data fetch', () => {
  it('downloads a zip from a mirror, unpacks it in the expected layout, prints its sha256 and the variable to set, and leaves nothing beside it', async () => {
    const server = await startServer();
    const zip = alfworldZip();
    server.set('/alfworld/json_2.1.1_tw-pddl.zip', zip);
    const root = tempDir('agentrl-data-');
    const dir = join(root, 'alfworld');
    const r = await runCli(['data', 'fetch', 'alfworld', '--dir', dir, '--mirror', server.base]);
    expect(r.code, r.err).toBe(0);
    for (const split of ['train', 'valid_seen', 'valid_unseen']) {
      const [task] = readdirSync(join(dir, 'json_2.1.1', split));
      const [trial] = readdirSync(join(dir, 'json_2.1.1', split, task as string));
      const game = join(dir, 'json_2.1.1', split, task as string, trial as string, 'game.tw-pddl');
      expect(JSON.parse(readFileSync(game, 'utf8')).split).toBe(split);
    }
    expect(r.out).toContain(`json_2.1.1_tw-pddl.zip  ${zip.length} bytes  sha256 ${sha256(zip)}`);
    expect(r.out).toContain('no recorded checksum: pin this one');
    expect(r.out).toContain(`Set ALFWORLD_DATA=${dir}`);
    expect(r.err).toMatch(/alfworld: json_2\.1\.1_tw-pddl\.zip .* \(100%\)\n/);
    const record = JSON.parse(readFileSync(join(dir, FETCH_RECORD), 'utf8'));
    expect(record.files[0]).toMatchObject({ name: 'json_2.1.1_tw-pddl.zip', sha256: sha256(zip) });
    expect(entries(root)).toEqual(['alfworld']);
    expect(server.requests).toHaveLength(1);
  });

  it('reports a body cut off before its Content-Length as truncated, keeps the partial file and resumes from it on the next run', async () => {
    const server = await startServer();
    const zip = alfworldZip();
    server.set('/alfworld/json_2.1.1_tw-pddl.zip', zip, 'cut-first');
    const root = tempDir('agentrl-data-');
    const dir = join(root, 'alfworld');
    const args = ['data', 'fetch', 'alfworld', '--dir', dir, '--mirror', server.base];
    const first = await runCli(args);
    expect(first.code).toBe(1);
    expect(first.err).toMatch(
      /agentrl data failed \[TRUNCATED\]: json_2\.1\.1_tw-pddl\.zip: the download stopped after \d+ of \d+ bytes .*run the same command again to resume/,
    );
    expect(existsSync(dir)).toBe(false);
    // What reached the disk before the cut (chunks still queued in the HTTP client are lost).
    const kept = statSync(join(root, '.alfworld.download', 'json_2.1.1_tw-pddl.zip.part')).size;
    expect(kept).toBeLessThan(zip.length);

    const second = await runCli(args);
    expect(second.code, second.err).toBe(0);
    expect(server.requests.map((q) => q.range)).toEqual([
      undefined,
      kept > 0 ? `bytes=${kept}-` : undefined,
    ]);
    expect(second.out).toContain(`sha256 ${sha256(zip)}`);
    expect(existsSync(join(dir, 'json_2.1.1', 'valid_unseen'))).toBe(true);
    expect(entries(root)).toEqual(['alfworld']);
  });

  it('resumes from a partial file left by an earlier run with a Range request for the rest', async () => {
    const server = await startServer();
    const zip = alfworldZip();
    server.set('/alfworld/json_2.1.1_tw-pddl.zip', zip);
    const root = tempDir('agentrl-data-');
    const dir = join(root, 'alfworld');
    const downloads = join(root, '.alfworld.download');
    mkdirSync(downloads);
    const kept = 70_000;
    writeFileSync(join(downloads, 'json_2.1.1_tw-pddl.zip.part'), zip.subarray(0, kept));
    writeFileSync(
      join(downloads, 'json_2.1.1_tw-pddl.zip.part.json'),
      JSON.stringify({ url: `${server.base}/alfworld/json_2.1.1_tw-pddl.zip`, validator: '"v1"' }),
    );
    const r = await runCli(['data', 'fetch', 'alfworld', '--dir', dir, '--mirror', server.base]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`alfworld: json_2.1.1_tw-pddl.zip: resuming at byte ${kept}`);
    expect(server.requests.map((q) => q.range)).toEqual([`bytes=${kept}-`]);
    expect(r.out).toContain(`${zip.length} bytes  sha256 ${sha256(zip)}`);
    expect(entries(root)).toEqual(['alfworld']);
  });

  it('starts over when the server answers a Range request with the whole file', async () => {
    const server = await startServer();
    const body = strToU8('{"a": 1}\n'.repeat(5000));
    server.set('/tiny/a.json', body, 'ignore-range');
    const root = tempDir('agentrl-data-');
    const dir = join(root, 'tiny');
    const dataset = oneFileDataset(server.base, { name: 'a.json' });
    // A partial file from an earlier attempt, with the first bytes wrong.
    mkdirSync(join(root, '.tiny.download'));
    writeFileSync(join(root, '.tiny.download', 'a.json.part'), 'XXXX');
    writeFileSync(
      join(root, '.tiny.download', 'a.json.part.json'),
      JSON.stringify({ url: dataset.files[0]?.url }),
    );
    const notes: string[] = [];
    const done = await fetchDataset(dataset, { dir, onNote: (m) => notes.push(m) });
    expect(done.files[0]?.sha256).toBe(sha256(body));
    expect(readFileSync(join(dir, 'a.json'))).toEqual(Buffer.from(body));
    expect(notes.join('\n')).toContain('the server sent the whole file instead of the rest');
    expect(server.requests.map((q) => q.range)).toEqual(['bytes=4-']);
  });

  it('rejects a file whose sha256 is not the recorded one, naming both hashes, and puts nothing in place', async () => {
    const server = await startServer();
    const body = strToU8('the file the server has now\n');
    server.set('/tiny/data.bin', body);
    const root = tempDir('agentrl-data-');
    const dir = join(root, 'tiny');
    const recorded = sha256(strToU8('the file that was recorded\n'));
    const dataset = oneFileDataset(server.base, { name: 'data.bin', sha256: recorded });
    const error = await fetchDataset(dataset, { dir }).catch((e: unknown) => e);
    expect(isAgentRLError(error, 'CHECKSUM_MISMATCH')).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain(sha256(body));
    expect(message).toContain(recorded);
    expect(message).toContain('run again to download it afresh');
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(join(root, '.tiny.download'))).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('rejects a file of another size than the recorded one', async () => {
    const server = await startServer();
    server.set('/tiny/data.bin', strToU8('12345'));
    const root = tempDir('agentrl-data-');
    const dataset = oneFileDataset(server.base, { name: 'data.bin', bytes: 6 });
    const error = await fetchDataset(dataset, { dir: join(root, 'tiny') }).catch((e: unknown) => e);
    expect(isAgentRLError(error, 'CHECKSUM_MISMATCH')).toBe(true);
    expect((error as Error).message).toContain('got 5 bytes, expected 6');
    expect(server.requests).toHaveLength(1);
  });

  it('says which address answered 404', async () => {
    const server = await startServer();
    const root = tempDir('agentrl-data-');
    const dir = join(root, 'webshop');
    const r = await runCli(['data', 'fetch', 'webshop', '--dir', dir, '--mirror', server.base]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      `agentrl data failed [NOT_FOUND]: items_shuffle_1000.json: ${server.base}/webshop/items_shuffle_1000.json answered 404`,
    );
    expect(existsSync(dir)).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('says when the host cannot be reached', async () => {
    const server = await startServer();
    const base = server.base;
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    const root = tempDir('agentrl-data-');
    const r = await runCli([
      'data',
      'fetch',
      'webshop',
      '--dir',
      join(root, 'w'),
      '--mirror',
      base,
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /\[UNREACHABLE\]: items_shuffle_1000\.json: cannot reach 127\.0\.0\.1:\d+ \(ECONNREFUSED\); check the network/,
    );
  });

  it('refuses an HTML page served for a data file', async () => {
    const server = await startServer();
    server.set('/webshop/items_shuffle_1000.json', strToU8(''), 'html');
    const root = tempDir('agentrl-data-');
    const r = await runCli([
      'data',
      'fetch',
      'webshop',
      '--dir',
      join(root, 'w'),
      '--mirror',
      server.base,
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/\[DOWNLOAD_FAILED\]: items_shuffle_1000\.json: .* sent an HTML page/);
    expect(server.requests).toHaveLength(1);
  });

  it('fetches the WebShop files, checking that each is JSON, and keeps an existing folder unless --force', async () => {
    const server = await startServer();
    const files = {
      'items_shuffle_1000.json': [{ asin: 'B0', name: 'a pen' }],
      'items_ins_v2_1000.json': { B0: { attributes: ['blue'] } },
      'items_human_ins.json': { B0: [] },
    };
    for (const [name, value] of Object.entries(files))
      server.set(`/webshop/${name}`, strToU8(JSON.stringify(value)));
    const root = tempDir('agentrl-data-');
    const dir = join(root, 'webshop');
    mkdirSync(dir);
    writeFileSync(join(dir, 'items_ins_v2_1000.json'), '{}');
    const args = ['data', 'fetch', 'webshop', '--dir', dir, '--mirror', server.base];
    const refused = await runCli(args);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`${dir} already exists and is not empty; pass --force`);
    expect(server.requests).toHaveLength(0);

    const r = await runCli([...args, '--force']);
    expect(r.code, r.err).toBe(0);
    for (const [name, value] of Object.entries(files))
      expect(JSON.parse(readFileSync(join(dir, name), 'utf8'))).toEqual(value);
    expect(r.out).toContain(`Set WEBSHOP_DATA=${dir}`);
    expect(entries(root)).toEqual(['webshop']);
    expect(server.requests).toHaveLength(3);

    const again = await runCli(args);
    expect(again.err).toMatch(/already exists \(fetched \d{4}-\d\d-\d\dT/);
  });

  it('a file that is not JSON is removed, so the next run downloads it afresh', async () => {
    const server = await startServer();
    server.set('/tiny/a.json', strToU8('not json at all'));
    const root = tempDir('agentrl-data-');
    const dataset: NamedDataset = {
      ...oneFileDataset(server.base, { name: 'a.json' }),
      files: [
        {
          name: 'a.json',
          url: `${server.base}/tiny/a.json`,
          source: 'made in the test',
          unpack: { kind: 'json', to: 'a.json' },
        },
      ],
    };
    const error = await fetchDataset(dataset, { dir: join(root, 'tiny') }).catch((e: unknown) => e);
    expect(isAgentRLError(error, 'BAD_DATA')).toBe(true);
    expect((error as Error).message).toMatch(
      /a\.json is not JSON \(it starts "not json at all".*run again to download it afresh/,
    );
    expect(readdirSync(join(root, '.tiny.download'))).toEqual([]);
    expect(entries(root)).toEqual(['.tiny.download']);
  });

  it('writes one member of a tar.gz under its new name, and refuses an archive without it', async () => {
    const server = await startServer();
    const work = tempDir('agentrl-tar-');
    const member = 'data00/x/wiki_dump.jsonl';
    mkdirSync(join(work, 'data00', 'x'), { recursive: true });
    const corpus =
      '{"id": "0", "contents": "\\"A\\"\\nText"}\n{"id": "1", "contents": "\\"B\\"\\nMore"}\n';
    writeFileSync(join(work, member), corpus);
    writeFileSync(join(work, 'other.txt'), 'not wanted');
    await createTar({ gzip: true, file: join(work, 'corpus.tar.gz'), cwd: work }, [
      'other.txt',
      member,
    ]);
    server.set('/tiny/corpus.tar.gz', readFileSync(join(work, 'corpus.tar.gz')));
    const root = tempDir('agentrl-data-');
    const dataset = (wanted: string): NamedDataset => ({
      ...oneFileDataset(server.base, { name: 'corpus.tar.gz' }),
      files: [
        {
          name: 'corpus.tar.gz',
          url: `${server.base}/tiny/corpus.tar.gz`,
          source: 'made in the test',
          unpack: { kind: 'tar-member', member: wanted, to: 'corpus.jsonl' },
        },
      ],
      expect: ['corpus.jsonl'],
    });
    const done = await fetchDataset(dataset(member), { dir: join(root, 'tiny') });
    expect(readFileSync(join(done.dir, 'corpus.jsonl'), 'utf8')).toBe(corpus);
    expect(entries(join(root, 'tiny'))).toEqual([FETCH_RECORD, 'corpus.jsonl']);

    const error = await fetchDataset(dataset('data00/y/missing.jsonl'), {
      dir: join(root, 'other'),
    }).catch((e: unknown) => e);
    expect(isAgentRLError(error, 'BAD_DATA')).toBe(true);
    expect((error as Error).message).toContain('holds no file "data00/y/missing.jsonl"');
    expect(existsSync(join(root, 'other'))).toBe(false);
    expect(server.requests).toHaveLength(2);
  });

  it('checks the search-r1 files against their recorded sizes: another test.parquet is refused after the corpus was downloaded, and the corpus stays for the next run', async () => {
    const server = await startServer();
    const work = tempDir('agentrl-tar-');
    const member = 'data00/jiajie_jin/flashrag_indexes/wiki_dpr_100w/wiki_dump.jsonl';
    mkdirSync(join(work, dirname(member)), { recursive: true });
    writeFileSync(join(work, member), '{"id": "0", "contents": "\\"A\\"\\nText"}\n');
    await createTar({ gzip: true, file: join(work, 'wiki.tgz'), cwd: work }, [member]);
    server.set('/search-r1/wiki-18.jsonl.gz', readFileSync(join(work, 'wiki.tgz')));
    const parquet = strToU8('PAR1 not the recorded file PAR1');
    server.set('/search-r1/test.parquet', parquet);
    const root = tempDir('agentrl-data-');
    const dir = join(root, 'search');
    const r = await runCli(['data', 'fetch', 'search-r1', '--dir', dir, '--mirror', server.base]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      `[CHECKSUM_MISMATCH]: test.parquet: got ${parquet.length} bytes, expected 70370337`,
    );
    expect(existsSync(dir)).toBe(false);
    // The corpus archive stays downloaded for the next run; the wrong file is gone.
    expect(readdirSync(join(root, '.search.download'))).toEqual(['wiki-18.jsonl.gz']);
    expect(server.requests.map((q) => q.path)).toEqual([
      '/search-r1/wiki-18.jsonl.gz',
      '/search-r1/test.parquet',
    ]);
  });

  it('builds the search-QA set from its sources, keeping them under sources/, and names SEARCH_QA_DATA', async () => {
    const server = await startServer();
    const record = (id: string, title: string, other: string) => ({
      _id: id,
      answer: 'yes',
      question: `Is ${title} real?`,
      supporting_facts: [
        [title, 0],
        [title, 1],
      ],
      context: [
        [title, [`${title} is real.`, ' It is. ']],
        [other, [`${other} too.`]],
      ],
      type: 'comparison',
      level: 'easy',
    });
    const sources: Record<string, string> = {
      'hotpot_dev_distractor_v1.json': JSON.stringify([
        record('a1', 'Alpha', 'Beta'),
        record('b2', 'Beta', 'Alpha'),
      ]),
      'NQ-open.dev.jsonl': '{"question": "who", "answer": ["me", "I"]}\n',
      'musique-dev.jsonl': `${JSON.stringify({ extra_info: { question: 'Why?', answer: 'Because' } })}\n`,
      'bamboogle-test.jsonl': `${JSON.stringify({ extra_info: { question: 'Where?', answer: 'Here' } })}\n`,
    };
    for (const [name, body] of Object.entries(sources))
      server.set(`/search/${name}`, strToU8(body));
    // The real manifest with its recorded sizes and checksums left out (these sources are made here).
    const dataset: NamedDataset = {
      ...DATASETS.search,
      name: 'search',
      files: DATASETS.search.files.map(({ name, source, unpack }) => ({
        name,
        source,
        unpack,
        url: `${server.base}/search/${name}`,
      })),
    };
    const root = tempDir('agentrl-data-');
    const notes: string[] = [];
    const done = await fetchDataset(dataset, {
      dir: join(root, 'search-qa'),
      onNote: (m) => notes.push(m),
    });
    expect(readFileSync(join(done.dir, 'corpus.jsonl'), 'utf8')).toBe(
      '{"id": "0", "contents": "\\"Alpha\\"\\nAlpha is real. It is."}\n' +
        '{"id": "1", "contents": "\\"Beta\\"\\nBeta too."}\n' +
        '{"id": "2", "contents": "\\"Beta\\"\\nBeta is real. It is."}\n' +
        '{"id": "3", "contents": "\\"Alpha\\"\\nAlpha too."}\n',
    );
    const questions = readFileSync(join(done.dir, 'questions.jsonl'), 'utf8').split('\n');
    expect(questions[0]).toBe(
      '{"id": "a1", "data_source": "hotpotqa", "question": "Is Alpha real?", "golden_answers": ["yes"], "in_corpus": true, "supporting_titles": ["Alpha"], "type": "comparison", "level": "easy"}',
    );
    expect(questions.slice(2)).toEqual([
      '{"id": "nq-test-0", "data_source": "nq", "question": "who", "golden_answers": ["me", "I"], "in_corpus": false}',
      '{"id": "hotpotqa-dev-0", "data_source": "hotpotqa", "question": "Is Alpha real?", "golden_answers": ["yes"], "in_corpus": false}',
      '{"id": "hotpotqa-dev-1", "data_source": "hotpotqa", "question": "Is Beta real?", "golden_answers": ["yes"], "in_corpus": false}',
      '{"id": "musique-dev-0", "data_source": "musique", "question": "Why?", "golden_answers": ["Because"], "in_corpus": false}',
      '{"id": "bamboogle-test-0", "data_source": "bamboogle", "question": "Where?", "golden_answers": ["Here"], "in_corpus": false}',
      '',
    ]);
    expect(entries(join(done.dir, 'sources'))).toEqual(Object.keys(sources).sort());
    expect(notes.join('\n')).toContain('built corpus.jsonl (4 passages)');
    expect(done.hint).toMatch(
      new RegExp(`^Set SEARCH_QA_DATA=${done.dir} so that the environment finds it[.:]`),
    );
    expect(entries(root)).toEqual(['search-qa']);
    expect(server.requests).toHaveLength(4);
  });

  it('refuses a zip entry that points outside the dataset folder, and puts nothing in place', async () => {
    const server = await startServer();
    server.set('/tiny/evil.zip', zipSync({ '../escaped.txt': strToU8('out') }));
    const root = tempDir('agentrl-data-');
    const inner = join(root, 'inner');
    mkdirSync(inner);
    const dataset: NamedDataset = {
      ...oneFileDataset(server.base, { name: 'evil.zip' }),
      files: [
        {
          name: 'evil.zip',
          url: `${server.base}/tiny/evil.zip`,
          source: 'made in the test',
          unpack: { kind: 'zip' },
        },
      ],
    };
    const error = await fetchDataset(dataset, { dir: join(inner, 'tiny') }).catch(
      (e: unknown) => e,
    );
    expect(isAgentRLError(error, 'BAD_DATA')).toBe(true);
    expect((error as Error).message).toContain('points outside the dataset folder');
    expect(entries(inner)).toEqual(['.tiny.download']);
    expect(entries(root)).toEqual(['inner']);
  });

  it('without --dir writes to <AGENTRL_DATA>/<folder>, says where before and after, and the env finds it there', async () => {
    const server = await startServer();
    server.set('/alfworld/json_2.1.1_tw-pddl.zip', alfworldZip());
    const root = tempDir('agentrl-data-root-');
    const saved = {
      AGENTRL_DATA: process.env.AGENTRL_DATA,
      ALFWORLD_DATA: process.env.ALFWORLD_DATA,
    };
    onTestFinished(() => {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    });
    process.env.AGENTRL_DATA = root;
    delete process.env.ALFWORLD_DATA;
    const r = await runCli(['data', 'fetch', 'alfworld', '--mirror', server.base]);
    expect(r.code, r.err).toBe(0);
    const dir = join(root, 'alfworld');
    expect(r.err).toContain(`alfworld: fetching into ${dir} (under AGENTRL_DATA)\n`);
    expect(r.out).toContain(`alfworld: fetched into ${dir}\n`);
    expect(r.out).toContain('The environment finds it there by default.');
    expect(existsSync(join(dir, 'json_2.1.1', 'valid_seen'))).toBe(true);
    expect(entries(root)).toEqual(['alfworld']);
  });

  it('without AGENTRL_DATA writes to the platform cache folder, and names the variable the env reads instead', async () => {
    const server = await startServer();
    const body = strToU8('{"ok":true}');
    server.set('/tiny/a.json', body);
    const home = tempDir('agentrl-data-home-');
    const notes: string[] = [];
    const done = await fetchDataset(oneFileDataset(server.base, { name: 'a.json' }), {
      mirror: server.base,
      context: { env: {}, platform: 'linux', home },
      onNote: (m) => notes.push(m),
    });
    const dir = join(home, '.cache', 'agentrl', 'tiny');
    expect(done.dir).toBe(dir);
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('{"ok":true}');
    expect(notes[0]).toBe(
      `fetching into ${dir} (the user cache folder; AGENTRL_DATA or --dir chooses another)`,
    );
    expect(done.hint).toBe('The environment finds it there by default.');

    server.set('/tiny/b.json', body);
    const elsewhere = await fetchDataset(oneFileDataset(server.base, { name: 'b.json' }), {
      mirror: server.base,
      context: { env: { AGENTRL_TEST_TINY_DATA: join(home, 'theirs') }, platform: 'linux', home },
      force: true,
    });
    expect(elsewhere.hint).toBe(
      `Set AGENTRL_TEST_TINY_DATA=${dir} so that the environment finds it: AGENTRL_TEST_TINY_DATA names ${join(home, 'theirs')} now.`,
    );
  });

  it('defaults to the cache folder of each platform, or AGENTRL_DATA', () => {
    const alfworld = { ...DATASETS.alfworld, name: 'alfworld' };
    expect(defaultDatasetDir(alfworld, { env: {}, platform: 'linux', home: '/home/a' })).toBe(
      '/home/a/.cache/agentrl/alfworld',
    );
    expect(
      defaultDatasetDir(alfworld, {
        env: { XDG_CACHE_HOME: '/xdg' },
        platform: 'linux',
        home: '/h',
      }),
    ).toBe('/xdg/agentrl/alfworld');
    expect(defaultDatasetDir(alfworld, { env: {}, platform: 'darwin', home: '/Users/a' })).toBe(
      '/Users/a/Library/Caches/agentrl/alfworld',
    );
    expect(
      defaultDatasetDir(
        { ...DATASETS.search, name: 'search' },
        { env: { AGENTRL_DATA: '/data' }, platform: 'linux', home: '/h' },
      ),
    ).toBe('/data/search-qa');
    // The per-dataset variable says where the env reads, not where a fetch writes.
    expect(
      defaultDatasetDir(alfworld, {
        env: { ALFWORLD_DATA: '/games' },
        platform: 'linux',
        home: '/h',
      }),
    ).toBe('/h/.cache/agentrl/alfworld');
  });

  it('names the datasets when given an unknown one', async () => {
    const r = await runCli(['data', 'fetch', 'alfwrld']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      '[BAD_CONFIG]: dataset "alfwrld" is unknown; use one of alfworld, webshop, search, search-r1',
    );
  });
});
