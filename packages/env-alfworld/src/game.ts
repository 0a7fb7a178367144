/**
 * Loading ALFWorld `game.tw-pddl` files into the plain tables the engine plays on
 * (ALFWorld's data layout and PDDL problems). Only what the text world needs is parsed: the objects, initial
 * facts and goal of the PDDL problem, and the task sentence of the grammar.
 */
import { readFile } from 'node:fs/promises';
import { DataError } from '@agentrl/core';

/** The six ALFWorld task types (prefix of the task directory name). */
export const ALFWORLD_TASK_TYPES = [
  'pick_and_place_simple',
  'look_at_obj_in_light',
  'pick_clean_then_place_in_recep',
  'pick_heat_then_place_in_recep',
  'pick_cool_then_place_in_recep',
  'pick_two_obj_and_place',
] as const;

/** One of the six ALFWorld task types. */
export type AlfworldTaskType = (typeof ALFWORLD_TASK_TYPES)[number];

/** A receptacle of the household (cabinet, fridge, countertop...). */
export interface AlfworldReceptacle {
  /** Raw PDDL id, lower-cased. */
  readonly id: string;
  /** Display name, e.g. `cabinet 4`: class name and number, as TextWorld names entities. */
  readonly name: string;
  /** Type constant, lower-cased, e.g. `cabinettype`. */
  readonly type: string;
  /** Index into `locations`, or -1 when the receptacle stands nowhere (never shown). */
  readonly location: number;
  /** Has a door or lid. */
  readonly openable: boolean;
}

/** A (possibly portable) object of the household. */
export interface AlfworldObject {
  readonly id: string;
  readonly name: string;
  /** Type constant, lower-cased, e.g. `appletype`. */
  readonly type: string;
  readonly pickupable: boolean;
  readonly cleanable: boolean;
  readonly heatable: boolean;
  readonly coolable: boolean;
  readonly sliceable: boolean;
  readonly toggleable: boolean;
  /** A portable container (mug, bowl, pan...). */
  readonly receptacleObject: boolean;
  /** Objects inside this container object (`inReceptacleObject`), ascending indices. */
  readonly innerObjects: readonly number[];
}

/** A location of the household (visible only in the 0.3 dialect's `go to` feedback). */
export interface AlfworldLocation {
  readonly id: string;
  /** Display name, e.g. `loc 12`. */
  readonly name: string;
}

/** What has to hold for the game to be won (the `(:goal` of the PDDL problem). */
export interface AlfworldGoal {
  readonly taskType: AlfworldTaskType;
  /** Type constant of the object to move or hold. */
  readonly objectType: string;
  /** Type constant of the target receptacle (null for look_at_obj_in_light). */
  readonly receptacleType: string | null;
  /** Type constant of the lamp (look_at_obj_in_light only). */
  readonly lampType: string | null;
}

/** The dynamic facts at the start of the game, as indices into the game's tables. */
export interface AlfworldInitialState {
  readonly agentLocation: number;
  /** Held object index, or -1. */
  readonly held: number;
  readonly inReceptacle: readonly (readonly [object: number, receptacle: number])[];
  readonly objectAtLocation: readonly (readonly [object: number, location: number])[];
  readonly opened: readonly number[];
  readonly hot: readonly number[];
  readonly cool: readonly number[];
  readonly clean: readonly number[];
  readonly toggled: readonly number[];
  readonly sliced: readonly number[];
}

/** A parsed game: static tables, the initial state, the goal and the stored walkthrough. */
export interface AlfworldGame {
  /** Where the game was read from (or a label for games parsed from memory). */
  readonly path: string;
  /** `Your task is to: ...`, from the grammar's `task` entry. */
  readonly taskSentence: string;
  /** A winning command sequence in the 0.4 dialect, as stored in the file. */
  readonly walkthrough: readonly string[];
  readonly solvable: boolean;
  /** Receptacles in ascending raw-id order. */
  readonly receptacles: readonly AlfworldReceptacle[];
  /** Objects in ascending raw-id order. */
  readonly objects: readonly AlfworldObject[];
  /** Locations in ascending raw-id order. */
  readonly locations: readonly AlfworldLocation[];
  /** `canContain` pairs as `"<rtype> <otype>"`. */
  readonly canContain: ReadonlySet<string>;
  readonly goal: AlfworldGoal;
  readonly initial: AlfworldInitialState;
}

function bad(path: string, problem: string): DataError {
  return new DataError(`ALFWorld game ${path}: ${problem}`, { details: { path, problem } });
}

/** Reads and parses a `game.tw-pddl` file. Rejects with `BAD_DATA` naming the file when malformed. */
export async function loadAlfworldGame(path: string): Promise<AlfworldGame> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new DataError(
      `ALFWorld game ${path}: cannot be read (${(cause as Error).message}); check the data directory (dataDir option or ALFWORLD_DATA)`,
      { cause, details: { path } },
    );
  }
  return parseAlfworldGame(text, path);
}

/** Parses the text of a `game.tw-pddl` file; `path` only labels errors and `game.path`. */
export function parseAlfworldGame(text: string, path = '<memory>'): AlfworldGame {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw bad(path, `is not JSON (${(cause as Error).message})`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw bad(path, 'is not a JSON object with pddl_problem, grammar and walkthrough fields');
  }
  const record = json as Record<string, unknown>;
  const problem = record['pddl_problem'];
  const grammar = record['grammar'];
  if (typeof problem !== 'string')
    throw bad(path, 'field "pddl_problem" is missing or not a string');
  if (typeof grammar !== 'string') throw bad(path, 'field "grammar" is missing or not a string');
  const walkthroughRaw = record['walkthrough'] ?? [];
  if (!Array.isArray(walkthroughRaw) || walkthroughRaw.some((c) => typeof c !== 'string')) {
    throw bad(path, 'field "walkthrough" is not an array of strings');
  }
  const solvable = record['solvable'] === true;
  const taskSentence = parseTaskSentence(grammar, path);
  return {
    ...parseProblem(problem, path),
    path,
    taskSentence,
    walkthrough: walkthroughRaw as string[],
    solvable,
  };
}

/** The `rhs` of the first `task` entry of the grammar's JSON header. */
function parseTaskSentence(grammar: string, path: string): string {
  const start = grammar.indexOf('"""');
  const end = start < 0 ? -1 : grammar.indexOf('"""', start + 3);
  if (start >= 0 && end > start) {
    try {
      const header: unknown = JSON.parse(grammar.slice(start + 3, end));
      if (typeof header === 'object' && header !== null) {
        const task = (header as Record<string, unknown>)['task'];
        if (Array.isArray(task)) {
          const first: unknown = task[0];
          if (typeof first === 'object' && first !== null) {
            const rhs = (first as Record<string, unknown>)['rhs'];
            if (typeof rhs === 'string' && rhs.length > 0) return rhs;
          }
        }
      }
    } catch {
      // reported below with the file name
    }
  }
  throw bad(path, 'no task sentence: the grammar header has no "task" entry with an "rhs" string');
}

type Atom = readonly string[];

/** Splits the problem into atoms of `(:init` and the token list of `(:goal`. */
function tokenize(problem: string): string[] {
  return problem
    .replace(/;[^\n]*/g, '')
    .toLowerCase()
    .replace(/\(/g, ' ( ')
    .replace(/\)/g, ' ) ')
    .split(/\s+/)
    .filter((t) => t.length > 0);
}

function findSection(tokens: readonly string[], name: string): number {
  for (let i = 0; i + 1 < tokens.length; i++) {
    if (tokens[i] === '(' && tokens[i + 1] === name) return i + 2;
  }
  return -1;
}

function readInit(tokens: readonly string[], start: number, path: string): Atom[] {
  const atoms: Atom[] = [];
  let i = start;
  while (i < tokens.length) {
    const t = tokens[i];
    if (t === ')') return atoms;
    if (t !== '(') throw bad(path, `unexpected token "${t}" in (:init`);
    // one atom; skip nested numeric facts such as (= (total-cost) 0)
    let depth = 1;
    const atom: string[] = [];
    let nested = false;
    i++;
    while (i < tokens.length && depth > 0) {
      const u = tokens[i] as string;
      if (u === '(') {
        depth++;
        nested = true;
      } else if (u === ')') depth--;
      else if (depth === 1) atom.push(u);
      i++;
    }
    if (!nested && atom.length > 0 && atom[0] !== '=') atoms.push(atom);
  }
  throw bad(path, '(:init is not closed');
}

function readGoal(tokens: readonly string[], start: number, path: string): string[] {
  let depth = 1;
  const out: string[] = [];
  for (let i = start; i < tokens.length; i++) {
    const t = tokens[i] as string;
    if (t === '(') depth++;
    else if (t === ')') {
      depth--;
      if (depth === 0) return out;
    }
    out.push(t);
  }
  throw bad(path, '(:goal is not closed');
}

/** Display names for every id containing `_bar_` (TextWorld's naming: class name and number). */
function nameEntities(ids: Iterable<string>): Map<string, string> {
  const sorted = [...new Set(ids)].sort();
  const classOf = (id: string): string => {
    const head = id.slice(0, id.indexOf('_bar_'));
    return id.includes('basin') ? `${head}basin` : head;
  };
  const counts = new Map<string, number>();
  for (const id of sorted) {
    if (!id.includes('_bar_')) continue;
    const c = classOf(id);
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  const names = new Map<string, string>();
  for (const id of sorted) {
    if (!id.includes('_bar_')) {
      names.set(id, `${id} `);
      continue;
    }
    const c = classOf(id);
    const n = counts.get(c) ?? 1;
    names.set(id, `${c} ${n}`);
    counts.set(c, n - 1);
  }
  return names;
}

function parseGoal(goal: readonly string[], path: string): AlfworldGoal {
  const objectTypes = new Map<string, string>();
  const receptacleTypes: string[] = [];
  let toggledVar: string | null = null;
  let heldVar: string | null = null;
  let hasEq = false;
  let hot = false;
  let cool = false;
  let clean = false;
  for (let i = 0; i < goal.length; i++) {
    if (goal[i] !== '(') continue;
    const p = goal[i + 1];
    if (p === 'objecttype') objectTypes.set(goal[i + 2] ?? '', goal[i + 3] ?? '');
    else if (p === 'receptacletype') receptacleTypes.push(goal[i + 3] ?? '');
    else if (p === 'istoggled') toggledVar = goal[i + 2] ?? null;
    else if (p === 'holds') heldVar = goal[i + 3] ?? null;
    else if (p === '=') hasEq = true;
    else if (p === 'ishot') hot = true;
    else if (p === 'iscool') cool = true;
    else if (p === 'isclean') clean = true;
  }
  if (toggledVar !== null && heldVar !== null) {
    const lampType = objectTypes.get(toggledVar);
    const objectType = objectTypes.get(heldVar);
    if (lampType && objectType) {
      return { taskType: 'look_at_obj_in_light', objectType, lampType, receptacleType: null };
    }
  } else {
    const objectType = [...objectTypes.values()][0];
    const receptacleType = receptacleTypes[0];
    if (objectType && receptacleType) {
      const taskType: AlfworldTaskType = hasEq
        ? 'pick_two_obj_and_place'
        : hot
          ? 'pick_heat_then_place_in_recep'
          : cool
            ? 'pick_cool_then_place_in_recep'
            : clean
              ? 'pick_clean_then_place_in_recep'
              : 'pick_and_place_simple';
      return { taskType, objectType, receptacleType, lampType: null };
    }
  }
  throw bad(path, '(:goal is not one of the six ALFWorld goal shapes');
}

function parseProblem(
  problem: string,
  path: string,
): Omit<AlfworldGame, 'path' | 'taskSentence' | 'walkthrough' | 'solvable'> {
  const tokens = tokenize(problem);
  const initStart = findSection(tokens, ':init');
  if (initStart < 0) throw bad(path, 'pddl_problem has no (:init section');
  const goalStart = findSection(tokens, ':goal');
  if (goalStart < 0) throw bad(path, 'pddl_problem has no (:goal section');
  const atoms = readInit(tokens, initStart, path);
  const goal = parseGoal(readGoal(tokens, goalStart, path), path);

  const entityIds = new Set<string>();
  const receptacleType = new Map<string, string>();
  const objectType = new Map<string, string>();
  const locationIds = new Set<string>();
  for (const atom of atoms) {
    for (let k = 1; k < atom.length; k++) entityIds.add(atom[k] as string);
    const [p, a, b] = atom;
    if (p === 'receptacletype' && a && b) receptacleType.set(a, b);
    else if (p === 'objecttype' && a && b) objectType.set(a, b);
    if ((p === 'atlocation' || p === 'receptacleatlocation' || p === 'objectatlocation') && b) {
      locationIds.add(b);
    }
  }
  const names = nameEntities(entityIds);
  const recIds = [...receptacleType.keys()].sort();
  const objIds = [...objectType.keys()].sort();
  const locIds = [...locationIds].sort();
  const recIndex = new Map(recIds.map((id, i) => [id, i]));
  const objIndex = new Map(objIds.map((id, i) => [id, i]));
  const locIndex = new Map(locIds.map((id, i) => [id, i]));

  const recLoc = new Int32Array(recIds.length).fill(-1);
  const openable = new Set<string>();
  const flags = new Map<string, Set<string>>();
  const flag = (p: string): Set<string> => {
    let s = flags.get(p);
    if (!s) {
      s = new Set();
      flags.set(p, s);
    }
    return s;
  };
  const canContain = new Set<string>();
  const inner = new Map<number, Set<number>>();
  const inRec = new Set<string>();
  const inReceptacle: [number, number][] = [];
  const objAt = new Set<string>();
  const objectAtLocation: [number, number][] = [];
  let agentLocation = -1;
  let held = -1;
  for (const atom of atoms) {
    const [p, a, b] = atom;
    if (p === undefined || a === undefined) continue;
    switch (p) {
      case 'atlocation':
        if (b !== undefined) agentLocation = locIndex.get(b) ?? -1;
        break;
      case 'receptacleatlocation': {
        const r = recIndex.get(a);
        const l = b === undefined ? undefined : locIndex.get(b);
        if (r !== undefined && l !== undefined) recLoc[r] = l;
        break;
      }
      case 'objectatlocation': {
        const o = objIndex.get(a);
        const l = b === undefined ? undefined : locIndex.get(b);
        if (o !== undefined && l !== undefined && !objAt.has(`${o} ${l}`)) {
          objAt.add(`${o} ${l}`);
          objectAtLocation.push([o, l]);
        }
        break;
      }
      case 'inreceptacle': {
        const o = objIndex.get(a);
        const r = b === undefined ? undefined : recIndex.get(b);
        if (o !== undefined && r !== undefined && !inRec.has(`${o} ${r}`)) {
          inRec.add(`${o} ${r}`);
          inReceptacle.push([o, r]);
        }
        break;
      }
      case 'cancontain':
        if (b !== undefined) canContain.add(`${a} ${b}`);
        break;
      case 'openable':
        openable.add(a);
        break;
      case 'inreceptacleobject': {
        const o2 = objIndex.get(a);
        const o = b === undefined ? undefined : objIndex.get(b);
        if (o2 !== undefined && o !== undefined) {
          let s = inner.get(o);
          if (!s) {
            s = new Set();
            inner.set(o, s);
          }
          s.add(o2);
        }
        break;
      }
      case 'holds':
        if (b !== undefined) held = objIndex.get(b) ?? -1;
        break;
      default:
        flag(p).add(a);
    }
  }
  if (agentLocation < 0) throw bad(path, 'pddl_problem has no (atLocation agent1 <location>) fact');
  const has = (p: string, id: string): boolean => flags.get(p)?.has(id) ?? false;
  const receptacles: AlfworldReceptacle[] = recIds.map((id, i) => ({
    id,
    name: names.get(id) ?? id,
    type: receptacleType.get(id) as string,
    location: recLoc[i] as number,
    openable: openable.has(id),
  }));
  const objects: AlfworldObject[] = objIds.map((id, i) => ({
    id,
    name: names.get(id) ?? id,
    type: objectType.get(id) as string,
    pickupable: has('pickupable', id),
    cleanable: has('cleanable', id),
    heatable: has('heatable', id),
    coolable: has('coolable', id),
    sliceable: has('sliceable', id),
    toggleable: has('toggleable', id),
    receptacleObject: has('isreceptacleobject', id),
    innerObjects: [...(inner.get(i) ?? [])].sort((x, y) => x - y),
  }));
  const indices = (p: string, index: Map<string, number>): number[] =>
    [...(flags.get(p) ?? [])]
      .map((id) => index.get(id))
      .filter((x): x is number => x !== undefined)
      .sort((x, y) => x - y);
  return {
    receptacles,
    objects,
    locations: locIds.map((id) => ({ id, name: names.get(id) ?? id })),
    canContain,
    goal,
    initial: {
      agentLocation,
      held,
      inReceptacle,
      objectAtLocation,
      opened: indices('opened', recIndex),
      hot: indices('ishot', objIndex),
      cool: indices('iscool', objIndex),
      clean: indices('isclean', objIndex),
      toggled: indices('istoggled', objIndex),
      sliced: indices('issliced', objIndex),
    },
  };
}
