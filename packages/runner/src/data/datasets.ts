/**
 * The real datasets `agentrl data fetch` downloads: where each file comes from (the address the
 * upstream project's own download step uses), its size and sha256 where they are known, and how
 * it is unpacked into the folder layout the environment packages read. Plain data; the fetching
 * is in `fetch.ts`. Each env dataset's folder name and variable come from `DATA_LOCATIONS` of
 * `@agentrl/core/data`, which also owns where the envs look (`resolveDataDir`).
 */
import { DATA_LOCATIONS } from '@agentrl/core/data';

/** How a downloaded file becomes part of the dataset folder. */
export type UnpackStep =
  /** A zip archive, extracted as it is into the dataset folder. */
  | { readonly kind: 'zip' }
  /** One member of a tar archive (gzip-compressed or not), written as `to`. */
  | { readonly kind: 'tar-member'; readonly member: string; readonly to: string }
  /** A JSON document, checked to parse (a host's HTML error page does not), kept as `to`. */
  | { readonly kind: 'json'; readonly to: string }
  /** Kept as it is, as `to`. */
  | { readonly kind: 'file'; readonly to: string }
  /** An input of the dataset's build step, kept as `sources/<name>`. */
  | { readonly kind: 'source' };

/** One file of a dataset. */
export interface DatasetFile {
  /** The file's name: under a mirror it is fetched as `<mirror>/<dataset>/<name>`. */
  readonly name: string;
  /** Where upstream serves it. */
  readonly url: string;
  /** Its size in bytes, when recorded; otherwise only the server's Content-Length is checked. */
  readonly bytes?: number;
  /** Its sha256 (hex), when recorded; otherwise the computed one is printed for pinning. */
  readonly sha256?: string;
  /** Where the address and any size or checksum come from. */
  readonly source: string;
  readonly unpack: UnpackStep;
}

/** One dataset: its files and where the environment package looks for it. */
export interface Dataset {
  /** What it is, in a line. */
  readonly title: string;
  /** The folder name under a data root: `<root>/<folder>` is the default place (`defaultDatasetDir`). */
  readonly folder: string;
  /** The environment variable the environment package reads the folder from, if it has one. */
  readonly envVar?: string;
  /** How to point the environment at the folder otherwise (`{dir}` stands for the folder). */
  readonly pointAt?: string;
  /** Whether the environment package, told nothing, reads the folder `resolveDataDir` finds. */
  readonly readByDefault: boolean;
  /** Which package reads it and how to point it at the folder. */
  readonly usedBy: string;
  /** The approximate download and unpacked sizes, for help text and the README. */
  readonly size: string;
  readonly files: readonly DatasetFile[];
  /** Paths (relative to the dataset folder) that must exist once everything is unpacked. */
  readonly expect: readonly string[];
  /** A step that makes the dataset's files from its `sources/` (see `build-search-qa.ts`). */
  readonly build?: 'search-qa';
}

const ALFWORLD_SCRIPT =
  "ALFWorld's scripts/alfworld-download (alfworld/alfworld), TW_PDDL_FILES_URL";
const WEBSHOP_SETUP = "WebShop's setup.sh (princeton-nlp/WebShop), the `-d small` branch";
// Search-R1's scripts/download.py fetches the corpus from this Hugging Face dataset; verl-agent's
// search example reads the question sets of PeterJinGo/nq_hotpotqa_train. Both are pinned to a
// revision so that the recorded sizes and checksums stay true.
const WIKI18_REVISION = '69c1c00ffe7c5554c68d8548355cb22e46aabc51';
const NQ_HOTPOTQA_REVISION = 'b7d80abfee334a7a91cb377544f09180d58b34f6';
// The question files of the search-QA set, pinned to the commits the shipped copy was taken from.
const NQ_OPEN_COMMIT = 'fb26a3073b1fe636c97302890a27b491d6530130';
const AGENTIC_RAG_COMMIT = 'a6694e2ebfa1a3fcbbbe4a5607f6317ba70ddc40';
const MEASURED = 'size and sha256 measured on the file at that commit';

/** Google Drive's direct-download address of a file id (what `gdown` resolves first). */
function googleDrive(id: string): string {
  return `https://drive.google.com/uc?export=download&id=${id}`;
}

export const DATASETS = {
  alfworld: {
    title: 'ALFWorld text games (json_2.1.1: train, valid_seen, valid_unseen)',
    folder: DATA_LOCATIONS.alfworld.folder,
    envVar: DATA_LOCATIONS.alfworld.variable,
    readByDefault: true,
    usedBy:
      '@agentrl/env-alfworld (source: real): its dataDir option, else ALFWORLD_DATA, else the default folder',
    size: 'zip size not published; about 330 MB unpacked (3,827 games; the 2,135 of them in the shared folder take 183 MB)',
    files: [
      {
        name: 'json_2.1.1_tw-pddl.zip',
        url: 'https://aka.ms/alfworld/json_2.1.1_tw-pddl.zip',
        source: `${ALFWORLD_SCRIPT}; upstream publishes no size or checksum`,
        unpack: { kind: 'zip' },
      },
    ],
    expect: ['json_2.1.1/train', 'json_2.1.1/valid_seen', 'json_2.1.1/valid_unseen'],
  },
  webshop: {
    title: "WebShop's 1,000-product configuration (products, attributes, human instructions)",
    folder: DATA_LOCATIONS.webshop.folder,
    envVar: DATA_LOCATIONS.webshop.variable,
    readByDefault: true,
    usedBy:
      '@agentrl/env-webshop (catalogue kind data): its dataDir option, else WEBSHOP_DATA, else the default folder',
    size: 'about 10 MB (three JSON files)',
    files: [
      {
        name: 'items_shuffle_1000.json',
        url: googleDrive('1EgHdxQ_YxqIQlvvq5iKlCrkEKR6-j0Ib'),
        source: `${WEBSHOP_SETUP}; upstream publishes no size or checksum`,
        unpack: { kind: 'json', to: 'items_shuffle_1000.json' },
      },
      {
        name: 'items_ins_v2_1000.json',
        url: googleDrive('1IduG0xl544V_A_jv3tHXC0kyFi7PnyBu'),
        source: `${WEBSHOP_SETUP}; upstream publishes no size or checksum`,
        unpack: { kind: 'json', to: 'items_ins_v2_1000.json' },
      },
      {
        name: 'items_human_ins.json',
        url: googleDrive('14Kb5SPBk_jfdLZ_CDBNitW98QLDlKR5O'),
        source: `${WEBSHOP_SETUP} (downloaded for both sizes); upstream publishes no size or checksum`,
        unpack: { kind: 'json', to: 'items_human_ins.json' },
      },
    ],
    expect: ['items_shuffle_1000.json', 'items_ins_v2_1000.json', 'items_human_ins.json'],
  },
  search: {
    title:
      'search-QA: 13,657 questions (HotpotQA, NQ, MuSiQue, Bamboogle) and the 991-passage corpus of the first 100 HotpotQA dev questions',
    folder: DATA_LOCATIONS.search.folder,
    envVar: DATA_LOCATIONS.search.variable,
    readByDefault: true,
    usedBy:
      '@agentrl/env-search: its corpus and questions options, else corpus.jsonl and questions.jsonl of SEARCH_QA_DATA, else of the default folder',
    size: 'about 50 MB to download (most of it HotpotQA dev); about 3.5 MB built, plus the sources kept',
    files: [
      {
        name: 'hotpot_dev_distractor_v1.json',
        url: 'http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json',
        source:
          "HotpotQA's download.sh (hotpotqa/hotpot): the dev set, distractor setting; no size or checksum published",
        unpack: { kind: 'source' },
      },
      {
        name: 'NQ-open.dev.jsonl',
        url: `https://raw.githubusercontent.com/google-research-datasets/natural-questions/${NQ_OPEN_COMMIT}/nq_open/NQ-open.dev.jsonl`,
        bytes: 391_316,
        sha256: 'f15567f38099f3615f5b8a685c0aef449c11ad90d3da3735e8d1b98115b40616',
        source: `NQ-open dev (google-research-datasets/natural-questions, nq_open/); ${MEASURED}`,
        unpack: { kind: 'source' },
      },
      {
        name: 'musique-dev.jsonl',
        url: `https://raw.githubusercontent.com/chenyiqun/Agentic-RAG/${AGENTIC_RAG_COMMIT}/data/musique/test.jsonl`,
        bytes: 1_080_764,
        sha256: '06cff2b49f55bf2e6a653ebfde0bd1c2b453ad5cd33d645c3fba1fbe39afb7a4',
        source: `MuSiQue answerable dev in verl's row layout (chenyiqun/Agentic-RAG, data/musique/test.jsonl); ${MEASURED}`,
        unpack: { kind: 'source' },
      },
      {
        name: 'bamboogle-test.jsonl',
        url: `https://raw.githubusercontent.com/chenyiqun/Agentic-RAG/${AGENTIC_RAG_COMMIT}/data/bamboogle/test.jsonl`,
        bytes: 46_051,
        sha256: 'a2f9fc70a545ac9f7968a238c05357c7938b3ef38c32a7ebe42994904c665fce',
        source: `Bamboogle (Press et al., 2022) in verl's row layout (chenyiqun/Agentic-RAG, data/bamboogle/test.jsonl); ${MEASURED}`,
        unpack: { kind: 'source' },
      },
    ],
    build: 'search-qa',
    expect: ['corpus.jsonl', 'questions.jsonl'],
  },
  'search-r1': {
    title:
      'Search-R1: the wiki-18 passage corpus and the NQ + HotpotQA train and seven-dataset test questions',
    folder: 'search-r1',
    // Not SEARCH_QA_DATA: that variable also points env-search's tests at a folder, and they are
    // written for the small search-QA set, not a 21M-passage corpus.
    pointAt:
      "Point @agentrl/env-search at it with env.options { corpus: '{dir}/corpus.jsonl', questions: '{dir}/test.parquet' } (train.parquet for training).",
    readByDefault: false,
    usedBy:
      '@agentrl/env-search: its corpus and questions options (corpus.jsonl; test.parquet or train.parquet)',
    size: 'several GB to download; the corpus alone is about 14.4 GB unpacked (21M passages)',
    files: [
      {
        name: 'wiki-18.jsonl.gz',
        url: `https://huggingface.co/datasets/PeterJinGo/wiki-18-corpus/resolve/${WIKI18_REVISION}/wiki-18.jsonl.gz`,
        source:
          "Search-R1's scripts/download.py (PeterGriffinJin/Search-R1), dataset PeterJinGo/wiki-18-corpus; no size or checksum published beside it. Despite its name the file is a gzipped tar holding one JSONL member",
        unpack: {
          kind: 'tar-member',
          member: 'data00/jiajie_jin/flashrag_indexes/wiki_dpr_100w/wiki_dump.jsonl',
          to: 'corpus.jsonl',
        },
      },
      {
        name: 'test.parquet',
        url: `https://huggingface.co/datasets/PeterJinGo/nq_hotpotqa_train/resolve/${NQ_HOTPOTQA_REVISION}/test.parquet`,
        bytes: 70_370_337,
        sha256: '30aa887b6d47e06e8c0f6f5307c88fe4e13461ac25a20ec0a5433ad7a4fe25dc',
        source:
          "verl-agent's search example data (PeterJinGo/nq_hotpotqa_train): 51,713 test questions of NQ, TriviaQA, PopQA, HotpotQA, 2WikiMultiHopQA, MuSiQue and Bamboogle in Search-R1's row layout; size and sha256 as recorded by projects that pin this revision",
        unpack: { kind: 'file', to: 'test.parquet' },
      },
      {
        name: 'train.parquet',
        url: `https://huggingface.co/datasets/PeterJinGo/nq_hotpotqa_train/resolve/${NQ_HOTPOTQA_REVISION}/train.parquet`,
        bytes: 355_663_891,
        sha256: 'c3cc21e862a8469105de666101578cbff23cdc77e91a803cef102622c89cc4f6',
        source:
          'the same dataset: 169,615 NQ + HotpotQA training questions; size and sha256 as recorded by projects that pin this revision',
        unpack: { kind: 'file', to: 'train.parquet' },
      },
    ],
    expect: ['corpus.jsonl', 'test.parquet', 'train.parquet'],
  },
} as const satisfies Record<string, Dataset>;

/** A dataset with the name it is fetched under. */
export type NamedDataset = Dataset & { readonly name: string };

/** A dataset's name on the command line. */
export type DatasetName = keyof typeof DATASETS;

/** The dataset names, in the order help text lists them. */
export const DATASET_NAMES = Object.keys(DATASETS) as DatasetName[];
