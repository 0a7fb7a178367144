/**
 * The ALFWorld text world as a fast synchronous state machine. Every feedback string, listing
 * order and admissible-command rule reproduces ALFWorld 0.4.x on TextWorld's PDDL environment
 * (what verl-agent trains on) byte for byte; the parity tests replay upstream transcripts.
 */
import { InvalidInputError } from '@agentrl/core';
import type { AlfworldGame } from './game.ts';
import { displayList, HELP_TEXT, NOTHING_HAPPENS, pythonStrip, WELCOME } from './text.ts';

/** Which upstream text dialect to speak: ALFWorld 0.4.x (default) or 0.3.x. */
export type AlfworldDialect = '0.4' | '0.3';

/** Options of {@link AlfworldEngine}. */
export interface AlfworldEngineOptions {
  /** `'0.4'` (default; what verl-agent trains on) or `'0.3'` (`put X in/on Y`, locations). */
  readonly dialect?: AlfworldDialect;
}

/** What `reset()` returns. */
export interface AlfworldResetResult {
  readonly observation: string;
  readonly admissibleCommands: string[];
}

/** What `step()` returns. */
export interface AlfworldStepResult {
  readonly observation: string;
  readonly admissibleCommands: string[];
  readonly won: boolean;
}

const MIDDLE_OF_ROOM = 'You are in the middle of a room. Looking quickly around you, you see ';
const KNIFE_TYPES = new Set(['knifetype', 'butterknifetype']);
const SINK_TYPES = new Set(['sinktype', 'sinkbasintype']);

/** Plays one game. `reset()` must be called before `step()`; each reset restarts the game. */
export class AlfworldEngine {
  /** The game being played. */
  readonly game: AlfworldGame;
  /** The text dialect. */
  readonly dialect: AlfworldDialect;

  // static tables, built once from the game
  readonly #objectCount: number;
  readonly #receptacleCount: number;
  readonly #locationCount: number;
  /** Receptacle ids standing at each location, in id order. */
  readonly #receptaclesAt: number[][];
  /** Receptacles that stand at a location (the ones `go to` can reach). */
  readonly #placedReceptacles: number[];
  /** `go to <name>` for each receptacle. */
  readonly #goToCommand: string[];
  readonly #receptacleByName: Map<string, number>;
  readonly #objectByName: Map<string, number>;
  /** `[receptacle * objectCount + object]` is 1 where the receptacle type can hold the object type. */
  readonly #receptacleCanHold: Uint8Array;
  readonly #isMicrowave: Uint8Array;
  readonly #isFridge: Uint8Array;
  readonly #isSink: Uint8Array;
  readonly #isKnife: Uint8Array;
  readonly #sliceableObjects: number[];
  /** Objects and receptacles of the goal's types, and the lamps that count for a look-at goal. */
  readonly #goalObjects: number[];
  readonly #goalReceptacles: number[];
  readonly #goalLamps: number[];

  // dynamic state, reset by reset()
  #agentLocation = 0;
  /** The object in hand, or -1. */
  #heldObject = -1;
  /** `[object * receptacleCount + receptacle]`: the object is in the receptacle. */
  #inReceptacle: Uint8Array;
  /** Object ids inside each receptacle, ascending. */
  #receptacleContents: number[][] = [];
  /** `[object * locationCount + location]`: the object is at the location. */
  #objectAtLocation: Uint8Array;
  /**
   * `[object * receptacleCount + receptacle]`: the object was taken from the receptacle and not
   * put back. TextWorld keeps this negated fact (`not_inReceptacle`); `look` lists these objects
   * as "Next to it, you see ...".
   */
  #takenFrom: Uint8Array;
  #isOpen: Uint8Array;
  #isHot: Uint8Array;
  #isCool: Uint8Array;
  #isClean: Uint8Array;
  #isOn: Uint8Array;
  #isSliced: Uint8Array;
  #admissible: string[] = [];
  #won = false;
  #started = false;

  constructor(game: AlfworldGame, options: AlfworldEngineOptions = {}) {
    const dialect = options.dialect ?? '0.4';
    if (dialect !== '0.4' && dialect !== '0.3') {
      throw new InvalidInputError(
        `AlfworldEngine: dialect "${String(dialect)}" is not supported; use '0.4' or '0.3'`,
        { details: { field: 'dialect', value: dialect } },
      );
    }
    this.game = game;
    this.dialect = dialect;
    const recs = game.receptacles;
    const objs = game.objects;
    this.#objectCount = objs.length;
    this.#receptacleCount = recs.length;
    this.#locationCount = game.locations.length;
    this.#receptaclesAt = game.locations.map(() => []);
    this.#placedReceptacles = [];
    this.#goToCommand = recs.map((r) => `go to ${r.name}`);
    this.#receptacleByName = new Map(recs.map((r, i) => [r.name, i]));
    this.#objectByName = new Map(objs.map((o, i) => [o.name, i]));
    recs.forEach((r, i) => {
      if (r.location >= 0) {
        this.#receptaclesAt[r.location]?.push(i);
        this.#placedReceptacles.push(i);
      }
    });
    this.#receptacleCanHold = new Uint8Array(this.#receptacleCount * this.#objectCount);
    for (let r = 0; r < this.#receptacleCount; r++) {
      for (let o = 0; o < this.#objectCount; o++) {
        const key = `${(recs[r] as { type: string }).type} ${(objs[o] as { type: string }).type}`;
        if (game.canContain.has(key)) this.#receptacleCanHold[r * this.#objectCount + o] = 1;
      }
    }
    this.#isMicrowave = Uint8Array.from(recs, (r) => (r.type === 'microwavetype' ? 1 : 0));
    this.#isFridge = Uint8Array.from(recs, (r) => (r.type === 'fridgetype' ? 1 : 0));
    this.#isSink = Uint8Array.from(recs, (r) => (SINK_TYPES.has(r.type) ? 1 : 0));
    this.#isKnife = Uint8Array.from(objs, (o) => (KNIFE_TYPES.has(o.type) ? 1 : 0));
    this.#sliceableObjects = [];
    objs.forEach((o, i) => {
      if (o.sliceable) this.#sliceableObjects.push(i);
    });
    const goal = game.goal;
    this.#goalObjects = [];
    this.#goalLamps = [];
    objs.forEach((o, i) => {
      if (o.type === goal.objectType) this.#goalObjects.push(i);
      if (goal.lampType !== null && o.type === goal.lampType && o.toggleable)
        this.#goalLamps.push(i);
    });
    this.#goalReceptacles = [];
    recs.forEach((r, i) => {
      if (r.type === goal.receptacleType) this.#goalReceptacles.push(i);
    });
    this.#inReceptacle = new Uint8Array(this.#objectCount * this.#receptacleCount);
    this.#objectAtLocation = new Uint8Array(this.#objectCount * this.#locationCount);
    this.#takenFrom = new Uint8Array(this.#objectCount * this.#receptacleCount);
    this.#isOpen = new Uint8Array(this.#receptacleCount);
    this.#isHot = new Uint8Array(this.#objectCount);
    this.#isCool = new Uint8Array(this.#objectCount);
    this.#isClean = new Uint8Array(this.#objectCount);
    this.#isOn = new Uint8Array(this.#objectCount);
    this.#isSliced = new Uint8Array(this.#objectCount);
  }

  /** Restarts the game: the intro text (welcome, room, task) and the admissible commands. */
  reset(): AlfworldResetResult {
    const init = this.game.initial;
    this.#agentLocation = init.agentLocation;
    this.#heldObject = init.held;
    this.#inReceptacle.fill(0);
    this.#objectAtLocation.fill(0);
    this.#takenFrom.fill(0);
    this.#receptacleContents = this.game.receptacles.map(() => []);
    for (const [o, r] of init.inReceptacle) {
      this.#inReceptacle[o * this.#receptacleCount + r] = 1;
      this.#receptacleContents[r]?.push(o);
    }
    for (const list of this.#receptacleContents) list.sort((a, b) => a - b);
    for (const [o, l] of init.objectAtLocation)
      this.#objectAtLocation[o * this.#locationCount + l] = 1;
    const setAll = (arr: Uint8Array, idx: readonly number[]): void => {
      arr.fill(0);
      for (const i of idx) arr[i] = 1;
    };
    setAll(this.#isOpen, init.opened);
    setAll(this.#isHot, init.hot);
    setAll(this.#isCool, init.cool);
    setAll(this.#isClean, init.clean);
    setAll(this.#isOn, init.toggled);
    setAll(this.#isSliced, init.sliced);
    this.#started = true;
    const here = this.#receptaclesAt[this.#agentLocation] ?? [];
    const look =
      here.length > 0
        ? this.#look()
        : `${MIDDLE_OF_ROOM}${displayList(this.#placedReceptacles.map((r) => `a ${this.#receptacleName(r)}`))}.`;
    this.#admissible = this.#computeAdmissible();
    this.#won = this.#checkWon();
    return {
      observation: `${WELCOME}\n\n${look}\n\n${this.game.taskSentence}`,
      admissibleCommands: this.#admissible.slice(),
    };
  }

  /** The commands admissible now, sorted by code point (as upstream sorts them). */
  get admissibleCommands(): string[] {
    return this.#admissible.slice();
  }

  /** Whether the goal holds in the current state. */
  get won(): boolean {
    return this.#won;
  }

  /**
   * Applies one command: an admissible one changes the state and gives its feedback;
   * anything else gives `Nothing happens.`.
   */
  step(command: string): AlfworldStepResult {
    if (!this.#started) {
      throw new InvalidInputError(
        'AlfworldEngine.step() called before reset(); call reset() first',
        {
          details: { field: 'command', value: command },
        },
      );
    }
    const cmd = pythonStrip(command);
    const observation = this.#admissible.includes(cmd) ? this.#apply(cmd) : NOTHING_HAPPENS;
    this.#admissible = this.#computeAdmissible();
    this.#won = this.#checkWon();
    return { observation, admissibleCommands: this.#admissible.slice(), won: this.#won };
  }

  #receptacleName(r: number): string {
    return (this.game.receptacles[r] as { name: string }).name;
  }

  #objectName(o: number): string {
    return (this.game.objects[o] as { name: string }).name;
  }

  #visible(r: number): boolean {
    return !(this.game.receptacles[r] as { openable: boolean }).openable || this.#isOpen[r] === 1;
  }

  /** What opening, arriving at or examining receptacle `r` prints. */
  #describe(r: number): string {
    const rec = this.game.receptacles[r] as { name: string; openable: boolean };
    const list = (): string =>
      displayList((this.#receptacleContents[r] as number[]).map((o) => `a ${this.#objectName(o)}`));
    if (rec.openable) {
      return this.#isOpen[r] === 1
        ? `The ${rec.name} is open. In it, you see ${list()}.`
        : `The ${rec.name} is closed.`;
    }
    return `On the ${rec.name}, you see ${list()}.`;
  }

  /** What `look` prints: the receptacles here, and the objects taken from them and left here. */
  #look(): string {
    const here = this.#receptaclesAt[this.#agentLocation] ?? [];
    if (here.length === 0) return `${MIDDLE_OF_ROOM}nothing.`;
    const next: string[] = [];
    for (let o = 0; o < this.#objectCount; o++) {
      if (this.#objectAtLocation[o * this.#locationCount + this.#agentLocation] !== 1) continue;
      for (const r of here) {
        if (this.#takenFrom[o * this.#receptacleCount + r] === 1)
          next.push(`a ${this.#objectName(o)}`);
      }
    }
    return `You are facing the ${displayList(here.map((r) => this.#receptacleName(r)))}. Next to it, you see ${displayList(next)}.`;
  }

  /** What `examine <object>` prints: the first matching line wins. */
  #examineObject(o: number): string {
    const obj = this.game.objects[o] as {
      name: string;
      receptacleObject: boolean;
      toggleable: boolean;
      sliceable: boolean;
      innerObjects: readonly number[];
    };
    const n = obj.name;
    if (obj.receptacleObject) {
      return `This is a normal ${n}. In it, you see ${displayList(obj.innerObjects.map((i) => `a ${this.#objectName(i)}`))}.`;
    }
    const h = this.#isHot[o] === 1;
    const c = this.#isClean[o] === 1;
    const k = this.#isCool[o] === 1;
    const s = this.#isSliced[o] === 1;
    if (c && h && s) return `This is a hot and clean sliced ${n}.`;
    if (c && k && s) return `This is a cool and clean sliced ${n}.`;
    if (c && s) return `This is a clean sliced ${n}.`;
    if (h && s) return `This is a hot sliced ${n}.`;
    if (k && s) return `This is a cool sliced ${n}.`;
    if (c && h) return `This is a hot and clean ${n}.`;
    if (c && k) return `This is a cool and clean ${n}.`;
    if (h) return `This is a hot ${n}.`;
    if (c) return `This is a clean ${n}.`;
    if (k) return `This is a cold ${n}.`;
    if (obj.toggleable && this.#isOn[o] === 1) return `This ${n} is on.`;
    if (obj.sliceable && s) return `This is a sliced ${n}.`;
    return `There's nothing special about ${n}.`;
  }

  /** Every admissible command, deduplicated and sorted by code point. */
  #computeAdmissible(): string[] {
    const out: string[] = [];
    const objs = this.game.objects;
    const recs = this.game.receptacles;
    const here = this.#agentLocation;
    const held = this.#heldObject;
    for (const r of this.#placedReceptacles) {
      if ((recs[r] as { location: number }).location !== here)
        out.push(this.#goToCommand[r] as string);
    }
    const heldName = held >= 0 ? this.#objectName(held) : '';
    const heldObj = held >= 0 ? objs[held] : undefined;
    const put = this.dialect === '0.4' ? 'move ' : 'put ';
    const to = this.dialect === '0.4' ? ' to ' : ' in/on ';
    for (const r of this.#receptaclesAt[here] ?? []) {
      const rec = recs[r] as { name: string; openable: boolean };
      out.push(`examine ${rec.name}`);
      if (rec.openable) out.push(this.#isOpen[r] === 1 ? `close ${rec.name}` : `open ${rec.name}`);
      const visible = this.#visible(r);
      for (const o of this.#receptacleContents[r] as number[]) {
        const obj = objs[o] as { name: string; pickupable: boolean; toggleable: boolean };
        if (visible && held < 0 && obj.pickupable) out.push(`take ${obj.name} from ${rec.name}`);
        if (obj.toggleable) out.push(`use ${obj.name}`);
      }
      if (heldObj !== undefined) {
        if (visible && this.#receptacleCanHold[r * this.#objectCount + held] === 1) {
          out.push(`${put}${heldName}${to}${rec.name}`);
        }
        if (heldObj.heatable && this.#isMicrowave[r] === 1)
          out.push(`heat ${heldName} with ${rec.name}`);
        if (heldObj.coolable && this.#isFridge[r] === 1)
          out.push(`cool ${heldName} with ${rec.name}`);
        if (heldObj.cleanable && this.#isSink[r] === 1)
          out.push(`clean ${heldName} with ${rec.name}`);
      }
    }
    if (held >= 0) {
      // `examine <o>` is admissible for the held object only. Upstream's PDDL domain
      // (alfworld/data/alfred.pddl, action examineObject) also has a branch for an object lying
      // in a visible receptacle here, but declares it `(exists (?l - location, ?r - receptacle)`:
      // the planner reads the type `location,` with the comma, which no object has, so that
      // branch never holds and the real engine (alfworld 0.4.2, 0.3.5) answers `Nothing happens.`
      out.push(`examine ${heldName}`);
      if (this.#isKnife[held] === 1) {
        for (const o of this.#sliceableObjects) {
          if (this.#objectAtLocation[o * this.#locationCount + here] === 1) {
            out.push(`slice ${this.#objectName(o)} with ${heldName}`);
          }
        }
      }
    }
    if (this.dialect === '0.4') out.push('help');
    out.push('inventory', 'look');
    out.sort();
    let w = 0;
    for (let i = 0; i < out.length; i++) {
      if (i === 0 || out[i] !== out[w - 1]) out[w++] = out[i] as string;
    }
    out.length = w;
    return out;
  }

  /** Applies an admissible command and returns its feedback. */
  #apply(cmd: string): string {
    if (cmd === 'look') return this.#look();
    if (cmd === 'help') return HELP_TEXT;
    if (cmd === 'inventory') {
      return this.#heldObject >= 0
        ? `You are carrying: a ${this.#objectName(this.#heldObject)}.`
        : 'You are not carrying anything.';
    }
    const space = cmd.indexOf(' ');
    const verb = cmd.slice(0, space);
    const rest = cmd.slice(space + 1);
    const rec = (name: string): number => this.#receptacleByName.get(name) as number;
    const obj = (name: string): number => this.#objectByName.get(name) as number;
    const pair = (sep: string): [string, string] => {
      const at = rest.lastIndexOf(sep);
      return [rest.slice(0, at), rest.slice(at + sep.length)];
    };
    switch (verb) {
      case 'go': {
        const r = rec(rest.slice(3));
        const loc = (this.game.receptacles[r] as { location: number }).location;
        this.#agentLocation = loc;
        const where =
          this.dialect === '0.4'
            ? this.#receptacleName(r)
            : (this.game.locations[loc] as { name: string }).name;
        return `You arrive at ${where}. ${this.#describe(r)}`;
      }
      case 'open': {
        const r = rec(rest);
        this.#isOpen[r] = 1;
        return `You open the ${rest}. ${this.#describe(r)}`;
      }
      case 'close':
        this.#isOpen[rec(rest)] = 0;
        return `You close the ${rest}.`;
      case 'take': {
        const [on, rn] = pair(' from ');
        const o = obj(on);
        const r = rec(rn);
        this.#inReceptacle[o * this.#receptacleCount + r] = 0;
        const list = this.#receptacleContents[r] as number[];
        list.splice(list.indexOf(o), 1);
        this.#takenFrom[o * this.#receptacleCount + r] = 1;
        this.#objectAtLocation[o * this.#locationCount + this.#agentLocation] = 0;
        this.#heldObject = o;
        return `You pick up the ${on} from the ${rn}.`;
      }
      case 'move':
      case 'put': {
        const [on, rn] = pair(verb === 'move' ? ' to ' : ' in/on ');
        const o = obj(on);
        const r = rec(rn);
        if (this.#inReceptacle[o * this.#receptacleCount + r] !== 1) {
          this.#inReceptacle[o * this.#receptacleCount + r] = 1;
          const list = this.#receptacleContents[r] as number[];
          let i = list.length;
          while (i > 0 && (list[i - 1] as number) > o) i--;
          list.splice(i, 0, o);
        }
        this.#takenFrom[o * this.#receptacleCount + r] = 0;
        this.#objectAtLocation[o * this.#locationCount + this.#agentLocation] = 1;
        this.#heldObject = -1;
        return verb === 'move'
          ? `You move the ${on} to the ${rn}.`
          : `You put the ${on} in/on the ${rn}.`;
      }
      case 'heat': {
        const [on, rn] = pair(' with ');
        const o = obj(on);
        this.#isHot[o] = 1;
        this.#isCool[o] = 0;
        return `You heat the ${on} using the ${rn}.`;
      }
      case 'cool': {
        const [on, rn] = pair(' with ');
        const o = obj(on);
        this.#isCool[o] = 1;
        this.#isHot[o] = 0;
        return `You cool the ${on} using the ${rn}.`;
      }
      case 'clean': {
        const [on, rn] = pair(' with ');
        this.#isClean[obj(on)] = 1;
        return `You clean the ${on} using the ${rn}.`;
      }
      case 'slice': {
        const [on, kn] = pair(' with ');
        this.#isSliced[obj(on)] = 1;
        return `You sliced the ${on} with the ${kn}.`;
      }
      case 'use':
        this.#isOn[obj(rest)] = 1;
        return `You turn on the ${rest}.`;
      default: {
        // examine: a receptacle standing here, else an object
        const r = this.#receptacleByName.get(rest);
        if (r !== undefined && (this.#receptaclesAt[this.#agentLocation] ?? []).includes(r)) {
          return this.#describe(r);
        }
        return this.#examineObject(obj(rest));
      }
    }
  }

  /** Whether the game's goal holds on the current state. */
  #checkWon(): boolean {
    const goal = this.game.goal;
    const receptacleCount = this.#receptacleCount;
    switch (goal.taskType) {
      case 'look_at_obj_in_light': {
        const held = this.#heldObject;
        if (held < 0 || (this.game.objects[held] as { type: string }).type !== goal.objectType) {
          return false;
        }
        for (const r of this.#receptaclesAt[this.#agentLocation] ?? []) {
          for (const l of this.#goalLamps) {
            if (this.#isOn[l] === 1 && this.#inReceptacle[l * receptacleCount + r] === 1)
              return true;
          }
        }
        return false;
      }
      case 'pick_two_obj_and_place': {
        for (const r of this.#goalReceptacles) {
          let count = 0;
          for (const o of this.#goalObjects)
            if (this.#inReceptacle[o * receptacleCount + r] === 1) count++;
          if (count >= 2) return true;
        }
        return false;
      }
      default: {
        const state =
          goal.taskType === 'pick_clean_then_place_in_recep'
            ? this.#isClean
            : goal.taskType === 'pick_heat_then_place_in_recep'
              ? this.#isHot
              : goal.taskType === 'pick_cool_then_place_in_recep'
                ? this.#isCool
                : null;
        for (const o of this.#goalObjects) {
          if (state !== null && state[o] !== 1) continue;
          const obj = this.game.objects[o] as {
            cleanable: boolean;
            heatable: boolean;
            coolable: boolean;
          };
          if (goal.taskType === 'pick_clean_then_place_in_recep' && !obj.cleanable) continue;
          if (goal.taskType === 'pick_heat_then_place_in_recep' && !obj.heatable) continue;
          if (goal.taskType === 'pick_cool_then_place_in_recep' && !obj.coolable) continue;
          for (const r of this.#goalReceptacles)
            if (this.#inReceptacle[o * receptacleCount + r] === 1) return true;
        }
        return false;
      }
    }
  }
}
