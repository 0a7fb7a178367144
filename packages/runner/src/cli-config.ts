/**
 * `agentrl config list | show`: the presets by name, and a resolved config (preset, config file,
 * `--set` and the other flags applied, every default filled in) as YAML that `agentrl train -c`
 * reads back to the same config.
 */
import { stringify } from 'yaml';
import { UsageError } from './cli-errors.ts';
import type { Flags } from './cli-flags.ts';
import type { RunConfig } from './config.ts';
import { PRESETS } from './presets.ts';

/** Where `config` writes (the CLI's stdout). */
interface Out {
  write(text: string): unknown;
}

/** The YAML of `config` as a config file gives it (without the loader's `baseDir`). */
export function configYaml(config: RunConfig, header: string): string {
  const { baseDir: _, ...rest } = config;
  return `# ${header}\n${stringify(rest, { lineWidth: 0 })}`;
}

/** Runs `agentrl config <rest>`; `resolve` is the CLI's config resolution. */
export function configCommand(
  rest: readonly string[],
  flags: Flags,
  out: Out,
  resolve: (flags: Flags) => RunConfig,
): number {
  const sub = rest[0];
  if (sub === 'list' && rest.length === 1) {
    for (const name of Object.keys(PRESETS)) out.write(`${name}\n`);
    return 0;
  }
  if (sub === 'show' && rest.length <= 2) {
    const preset = rest[1] ?? flags.preset;
    if (preset === undefined && flags.config === undefined)
      throw new UsageError(
        `agentrl config show needs a config: --preset <name> (one of ${Object.keys(PRESETS).join(', ')}) or --config <file>`,
        { details: { field: '--preset' } },
      );
    const given = preset !== undefined ? { ...flags, preset } : flags;
    const source = [
      ...(preset !== undefined ? [`--preset ${preset}`] : []),
      ...(flags.config !== undefined ? [`--config ${flags.config}`] : []),
    ].join(' ');
    out.write(
      configYaml(
        resolve(given),
        `agentrl config show ${source}: the resolved config; agentrl train -c FILE reads it back`,
      ),
    );
    return 0;
  }
  throw new UsageError(
    `agentrl config: ${sub === undefined ? 'give a subcommand' : `unknown subcommand "${rest.join(' ')}"`}; use \`agentrl config list\` or \`agentrl config show --preset NAME\``,
    { details: { field: 'subcommand', value: rest.join(' ') } },
  );
}
