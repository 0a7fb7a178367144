/**
 * Run-config files and command-line overrides: reading a YAML or JSON file into a plain object,
 * merging layers (preset, file, flags), `--set a.b=value` assignments, and the folder a config's
 * relative paths resolve against. Validation is `parseRunConfig`'s (config.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '@agentrl/core';
import { parse as parseYaml } from 'yaml';

/** Reads a YAML (.yaml/.yml) or JSON config file into a plain object (not yet validated). */
export function readConfigFile(path: string): Record<string, unknown> {
  if (!existsSync(path))
    throw new ConfigError(`config file "${path}" does not exist; pass an existing --config`, {
      details: { field: 'config', value: path },
    });
  const text = readFileSync(path, 'utf8');
  let data: unknown;
  try {
    data = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError(`config file "${path}" does not parse: ${(error as Error).message}`, {
      details: { field: 'config', value: path },
    });
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw new ConfigError(
      `config file "${path}" must hold a mapping of settings at the top level`,
      {
        details: { field: 'config', value: path },
      },
    );
  return data as Record<string, unknown>;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Deep merge with JSON Merge Patch's rule for null (RFC 7386): objects merge key by key, a null
 * in `over` removes the key (so `--set env.options=null` puts a preset's options back to their
 * default), anything else in `over` replaces.
 */
export function mergeConfig(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const prev = out[k];
    if (v === null) delete out[k];
    else out[k] = isPlainObject(prev) && isPlainObject(v) ? mergeConfig(prev, v) : v;
  }
  return out;
}

/** `value` with every null-valued key removed, at any depth (what is left of a merge patch). */
export function withoutNulls(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null) continue;
    out[k] = isPlainObject(v) ? withoutNulls(v) : v;
  }
  return out;
}

/** A `--set key.path=value` split into its keys and its value, parsed as YAML. */
export function parseOverride(assignment: string): { keys: string[]; value: unknown } {
  const eq = assignment.indexOf('=');
  if (eq <= 0)
    throw new ConfigError(
      `--set "${assignment}" must look like key.path=value (e.g. rollout.temperature=0.7)`,
      {
        details: { field: 'set', value: assignment },
      },
    );
  const key = assignment.slice(0, eq);
  const text = assignment.slice(eq + 1);
  // YAML reserves @ and ` at the start of a plain value; a package name such as
  // @agentrl/env-webshop is meant as the string it reads as.
  if (/^[@`]/.test(text)) return { keys: key.split('.'), value: text };
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new ConfigError(
      `--set ${key}: the value ${JSON.stringify(text)} does not parse as YAML (${(error as Error).message.split('\n')[0]}); quote it to mean the string: --set '${key}="${text}"'`,
      { details: { field: key, value: text } },
    );
  }
  return { keys: key.split('.'), value };
}

/**
 * Applies a `--set a.b.c=value` override (the value parsed as YAML: numbers, booleans, strings;
 * `null` removes the key, see {@link mergeConfig}).
 */
export function applyOverride(
  config: Record<string, unknown>,
  assignment: string,
): Record<string, unknown> {
  const { keys, value } = parseOverride(assignment);
  let patch: Record<string, unknown> = {};
  const root = patch;
  keys.forEach((k, i) => {
    if (i === keys.length - 1) patch[k] = value;
    else {
      const next: Record<string, unknown> = {};
      patch[k] = next;
      patch = next;
    }
  });
  return mergeConfig(config, root);
}

/** The folder a config file's relative paths are resolved against. */
export function configBaseDir(configPath: string | undefined): string {
  return configPath ? dirname(resolve(configPath)) : process.cwd();
}
