/** The help text of `agentrl data`: each dataset, its size, where it goes and its sources. */
import { DATASET_NAMES, DATASETS } from './datasets.ts';
import { defaultDatasetDir } from './fetch.ts';

/** The text after the flags in `agentrl data --help`. */
export function dataHelp(): string {
  const lines = DATASET_NAMES.map((name) => {
    const d = DATASETS[name];
    const where = defaultDatasetDir({ ...d, name });
    const files = d.files.map((f) => `      ${f.name}: ${f.url}\n        (${f.source})\n`).join('');
    return `  ${name.padEnd(9)}${d.title}\n      size: ${d.size}\n      default folder: ${where}\n      read by: ${d.usedBy}\n${files}`;
  });
  return `\nDatasets:\n${lines.join('')}\nA broken download resumes when the command is run again (the partial file is kept beside the folder). A file with a recorded sha256 is checked against it; for the others the size the server announced is checked and the computed sha256 printed, so that it can be pinned. The folder is put in place only once everything is unpacked. The default folder is <AGENTRL_DATA>/<dataset> when AGENTRL_DATA is set, else under the user cache folder (Linux: $XDG_CACHE_HOME/agentrl or ~/.cache/agentrl; macOS: ~/Library/Caches/agentrl; Windows: %LOCALAPPDATA%\\agentrl\\Cache), which the environments read when nothing else names a folder; --dir picks another. AGENTRL_DATA_MIRROR sets --mirror.\n`;
}
