/**
 * Declared options of a configurable thing (an advantage estimator, a registered environment):
 * the keys it accepts, each with one sentence and its default. The owner checks values, since it
 * knows what they mean; {@link checkOptionKeys} checks names, so a misspelt key fails with the
 * closest valid one instead of silently leaving a default in place. The runner, the CLI and the
 * docs read the same description.
 *
 * A plain data description rather than a schema library: core has no dependencies, and every
 * owner already validates its values with typed errors.
 */
import { closestName } from './closest.ts';
import { ConfigError } from './errors.ts';

/** One option: what it does, its default, and the keys of an object-valued option. */
export interface OptionSpec {
  /** One sentence: what the option does (and where its value comes from, e.g. an equation). */
  readonly description: string;
  /**
   * The value used when the key is absent (or a short phrase where it is computed, e.g. from an
   * environment variable); absent when the option is required or has none.
   */
  readonly default?: unknown;
  /** Keys of an object-valued option, checked the same way. */
  readonly options?: OptionsSchema;
  /**
   * The value (when a string) is a file or folder path: a run config resolves a relative one
   * against the config file's folder, not the working directory.
   */
  readonly path?: boolean;
}

/** The options a configurable thing accepts, by key. */
export type OptionsSchema = Readonly<Record<string, OptionSpec>>;

const PATH = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

/**
 * The message for an unknown `key` found at `where` (a config path such as `algorithm.options`,
 * or words such as `GiGPO options`), naming the closest of the `valid` keys when one is a
 * plausible typo ({@link closestName}) and listing them all.
 */
export function unknownKeyMessage(key: string, where: string, valid: readonly string[]): string {
  const name =
    where === '' ? `"${key}"` : PATH.test(where) ? `"${where}.${key}"` : `"${key}" in ${where}`;
  if (valid.length === 0) return `unknown key ${name}: remove it (no options are accepted there)`;
  const closest = closestName(key, valid);
  const hint = closest === undefined ? '' : `; did you mean "${closest}"?`;
  return `unknown key ${name}: remove it or check its spelling${hint} (valid keys: ${valid.join(', ')})`;
}

/** An object literal (or one parsed from a config file): not an array, not a class instance. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Throws a {@link ConfigError} for the first key of `options` (or of a nested object option) that
 * `schema` does not declare; the message names the key, `where` it was found (e.g.
 * `algorithm.options`) and the closest valid key. Values are not checked here, and neither are
 * the keys of class instances (a `Shop` given in code where plain data is also accepted).
 */
export function checkOptionKeys(options: unknown, schema: OptionsSchema, where: string): void {
  if (!isPlainObject(options)) return;
  const valid = Object.keys(schema);
  for (const [key, value] of Object.entries(options)) {
    const spec = schema[key];
    if (spec === undefined || !Object.hasOwn(schema, key)) {
      throw new ConfigError(unknownKeyMessage(key, where, valid), {
        details: {
          field: where === '' ? key : `${where}.${key}`,
          key,
          closest: closestName(key, valid),
        },
      });
    }
    if (spec.options !== undefined) checkOptionKeys(value, spec.options, `${where}.${key}`);
  }
}
