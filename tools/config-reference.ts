/**
 * `pnpm docs:config`: writes `docs/config-reference.md`, every key of a run config with its type,
 * default and description, read from where each is declared: the runner's zod schema
 * (`runConfigSchema` of `packages/runner/src/config.ts`, its `.describe(...)` texts), the options
 * each advantage estimator declares (`ESTIMATORS` of `@agentrl/algorithms`) and the options each
 * environment registers (the packages of the runner's `ENV_PACKAGES`). The runner's test
 * (`test/config-reference.test.ts`) fails when the committed file differs from what this writes.
 *
 * Written in erasable TypeScript only, so Node runs it as it is (with the `@agentrl/source`
 * condition, so that the workspace packages resolve to their sources: the root script passes it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESTIMATOR_NAMES, ESTIMATORS } from '../packages/algorithms/src/index.ts';
import {
  getEnvRegistration,
  listEnvs,
  type OptionSpec,
  type OptionsSchema,
} from '../packages/core/src/index.ts';
import { runConfigSchema } from '../packages/runner/src/config.ts';
import { ENV_PACKAGES, importModule } from '../packages/runner/src/plugins.ts';

/** Where the reference lives, relative to the repository root. */
export const CONFIG_REFERENCE_PATH = 'docs/config-reference.md';

/** The parts of a zod 4 schema this reads (its definition and its registered description). */
interface ZodLike {
  readonly description?: string;
  readonly _zod: { readonly def: ZodDef };
}

interface ZodDef {
  readonly type: string;
  readonly innerType?: ZodLike;
  readonly defaultValue?: unknown;
  readonly shape?: Readonly<Record<string, ZodLike>>;
  readonly entries?: Readonly<Record<string, string>>;
  readonly checks?: readonly { readonly _zod: { readonly def: CheckDef } }[];
  readonly format?: string;
}

interface CheckDef {
  readonly check: string;
  readonly value?: unknown;
  readonly inclusive?: boolean;
  readonly format?: string;
}

/** One row of a table: a key (dotted inside its section), its type, default and description. */
interface Row {
  readonly key: string;
  readonly type: string;
  readonly default: string;
  readonly description: string;
}

const code = (text: string): string => (text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``);

/** A value as a config file writes it: strings as they are, the rest as JSON. */
function valueText(value: unknown): string {
  return code(typeof value === 'string' ? value : JSON.stringify(value));
}

/**
 * An option's default: a value as {@link valueText} writes it, or, where the owner computes it, the
 * phrase that says how (an `OptionSpec` default with a space in it, e.g. `$WEBSHOP_DATA, else …`).
 */
function optionDefaultText(value: unknown): string {
  return typeof value === 'string' && /\s/.test(value) ? value : valueText(value);
}

/**
 * Text made safe for a Markdown table cell: one line, `|` escaped, and `<`/`>` outside code spans
 * written as entities (so that a tag in a description is shown, not read as HTML).
 */
function cell(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim().replaceAll('|', '\\|');
  return oneLine
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replaceAll('<', '&lt;').replaceAll('>', '&gt;')))
    .join('');
}

/** The schema inside optional and default wrappers, with its default and whether it may be absent. */
function unwrap(schema: ZodLike): {
  inner: ZodLike;
  defaultValue: unknown;
  hasDefault: boolean;
  optional: boolean;
  description: string | undefined;
} {
  let at = schema;
  let description = schema.description;
  let hasDefault = false;
  let defaultValue: unknown;
  let optional = false;
  for (;;) {
    const def = at._zod.def;
    if (def.type === 'default' && def.innerType !== undefined) {
      if (!hasDefault) defaultValue = def.defaultValue;
      hasDefault = true;
    } else if (def.type === 'optional' && def.innerType !== undefined) optional = true;
    else break;
    at = def.innerType;
    description ??= at.description;
  }
  return { inner: at, defaultValue, hasDefault, optional, description };
}

/** The bounds of a number schema, e.g. `≥ 1`, `> 0, ≤ 1`. */
function bounds(def: ZodDef): string {
  const parts: string[] = [];
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (typeof c.value !== 'number') continue;
    if (c.check === 'greater_than') parts.push(`${c.inclusive ? '≥' : '>'} ${c.value}`);
    if (c.check === 'less_than') parts.push(`${c.inclusive ? '≤' : '<'} ${c.value}`);
  }
  return parts.join(', ');
}

/** The type of a leaf schema in words. */
function typeText(schema: ZodLike): string {
  const def = schema._zod.def;
  switch (def.type) {
    case 'number': {
      const integer = (def.checks ?? []).some(
        (c) => c._zod.def.check === 'number_format' && /int/.test(c._zod.def.format ?? ''),
      );
      const range = bounds(def);
      return `${integer ? 'integer' : 'number'}${range === '' ? '' : ` ${range}`}`;
    }
    case 'string': {
      const url = (def.checks ?? []).some((c) => c._zod.def.format === 'url');
      return url ? 'string (URL)' : 'string';
    }
    case 'boolean':
      return 'boolean';
    case 'enum':
      return `one of ${Object.values(def.entries ?? {})
        .map((v) => code(v))
        .join(', ')}`;
    case 'record':
      return 'mapping';
    default:
      return def.type;
  }
}

/** The rows of an object schema, nested objects flattened into dotted keys. */
function schemaRows(shape: Readonly<Record<string, ZodLike>>, prefix = ''): Row[] {
  return Object.entries(shape).flatMap(([name, field]) => {
    const { inner, defaultValue, hasDefault, optional, description } = unwrap(field);
    const key = `${prefix}${name}`;
    const innerShape = inner._zod.def.type === 'object' ? inner._zod.def.shape : undefined;
    if (innerShape !== undefined) {
      const own: Row = {
        key,
        type: 'section',
        default: hasDefault || optional ? 'the defaults of its keys' : 'required',
        description: description ?? '',
      };
      return [own, ...schemaRows(innerShape, `${key}.`)];
    }
    return [
      {
        key,
        type: typeText(inner),
        default: hasDefault ? valueText(defaultValue) : optional ? 'absent' : 'required',
        description: description ?? '',
      },
    ];
  });
}

/** The rows of an `OptionsSchema`, nested option objects flattened into dotted keys. */
function optionRows(schema: OptionsSchema, prefix = ''): Row[] {
  return Object.entries(schema).flatMap(([name, spec]: [string, OptionSpec]) => {
    const key = `${prefix}${name}`;
    const path = spec.path === true ? " (a path: relative to the config file's folder)" : '';
    const row: Row = {
      key,
      type: spec.options !== undefined ? 'object' : '',
      default: 'default' in spec ? optionDefaultText(spec.default) : 'absent',
      description: `${spec.description}${path}`,
    };
    return [row, ...(spec.options !== undefined ? optionRows(spec.options, `${key}.`) : [])];
  });
}

function table(rows: readonly Row[], withType: boolean): string {
  const head = withType
    ? '| Key | Type | Default | Description |\n| --- | --- | --- | --- |\n'
    : '| Key | Default | Description |\n| --- | --- | --- |\n';
  return `${head}${rows
    .map((r) =>
      withType
        ? `| ${code(r.key)} | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.description)} |`
        : `| ${code(r.key)} | ${cell(r.default)} | ${cell(r.description)} |`,
    )
    .join('\n')}\n`;
}

/**
 * The environments the packages of `ENV_PACKAGES` register (the env families the runner imports
 * by itself), sorted by id, each with its package.
 */
async function registeredEnvs(): Promise<{ readonly id: string; readonly module: string }[]> {
  const runnerDir = fileURLToPath(new URL('../packages/runner/', import.meta.url));
  for (const module of Object.values(ENV_PACKAGES))
    await importModule(module, 'env.module', runnerDir);
  return listEnvs().flatMap((id) => {
    const module = ENV_PACKAGES[id.split('/')[0] ?? ''];
    return module === undefined ? [] : [{ id, module }];
  });
}

/** The text of `docs/config-reference.md` as the schemas and registries give it now. */
export async function configReference(): Promise<string> {
  const shape = (runConfigSchema as unknown as ZodLike)._zod.def.shape ?? {};
  const topLevel = Object.entries(shape).filter(([name]) => name !== 'baseDir');
  const scalars = topLevel.filter(([, field]) => unwrap(field).inner._zod.def.type !== 'object');
  const sections = topLevel.filter(([, field]) => unwrap(field).inner._zod.def.type === 'object');
  const parts: string[] = [
    '# Run config reference',
    '<!-- Generated by `pnpm docs:config` (tools/config-reference.ts) from the schemas named below: edit those, then run it again. -->',
    [
      'Every key of a run config (the YAML or JSON file of `agentrl train -c FILE`, what',
      '`agentrl config show` prints), with its type, its default and what it does, as declared in',
      "one place each: the run config's zod schema (`runConfigSchema` of `@agentrl/runner`,",
      '`packages/runner/src/config.ts`), the options each advantage estimator declares for',
      '`algorithm.options` (`ESTIMATORS` of `@agentrl/algorithms`) and the options each environment',
      'registers for `env.options` and `env.valOptions`. A key left out takes its default; an',
      'unknown key is an error naming the closest valid one. `model.options` belong to the model',
      'module (`model.module`), which checks them with its own schema. Commented configs of the',
      'CPU presets are in `examples/configs/`; `agentrl config show --preset NAME` prints a',
      'preset with every default filled in. In the tables, *required* means a config must give',
      'the key, and *absent* that it may be left out and has no default value (its description',
      'says what happens then).',
    ].join('\n'),
    '## Top level',
    table(
      [
        ...schemaRows(Object.fromEntries(scalars)),
        ...sections.map(([name, field]) => {
          const { hasDefault, description } = unwrap(field);
          return {
            key: name,
            type: 'section',
            default: hasDefault ? 'the defaults of its keys' : 'required',
            description: description ?? '',
          };
        }),
      ],
      true,
    ),
  ];
  for (const [name, field] of sections) {
    const { inner, description } = unwrap(field);
    parts.push(`## \`${name}\``);
    if (description !== undefined) parts.push(cell(description));
    parts.push(table(schemaRows(inner._zod.def.shape ?? {}, `${name}.`), true));
  }
  parts.push(
    '## Estimator options (`algorithm.options`)',
    'The keys each estimator of `algorithm.name` declares, with their defaults.',
  );
  for (const name of ESTIMATOR_NAMES) {
    const { description, options } = ESTIMATORS[name];
    parts.push(`### \`${name}\``, cell(description), table(optionRows(options), false));
  }
  parts.push(
    '## Environment options (`env.options`, `env.valOptions`)',
    'The keys each registered environment declares (its `env.id`, registered when its package is imported), with their defaults.',
  );
  for (const { id, module } of await registeredEnvs()) {
    const registration = getEnvRegistration(id);
    parts.push(`### \`${id}\` (${code(module)})`, cell(registration.description));
    const options = registration.options;
    parts.push(
      options === undefined || Object.keys(options).length === 0
        ? 'It declares no options.'
        : table(optionRows(options), false).trimEnd(),
    );
  }
  return `${parts.map((p) => p.trimEnd()).join('\n\n')}\n`;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const path = join(repoRoot, CONFIG_REFERENCE_PATH);
  const text = await configReference();
  let before: string | undefined;
  try {
    before = readFileSync(path, 'utf8');
  } catch {
    before = undefined;
  }
  if (before !== text) writeFileSync(path, text);
  process.stdout.write(
    `${CONFIG_REFERENCE_PATH}: ${before === text ? 'up to date' : 'written'} (${text.split('\n').length} lines)\n`,
  );
}
