/**
 * `createAlfworldBridgeEnv`: the same `TextEnv` over a Python process running upstream ALFWorld,
 * speaking JSON lines over stdio (protocol in `python/alfworld_bridge_server.py` and the README).
 * Every request has a timeout; a crashed or hung process is killed, the failure rejects the
 * pending call of that episode with a typed error, and the next reset starts a fresh process.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  AgentRLError,
  ConfigError,
  EpisodeLifecycle,
  InvalidInputError,
  type ResetOptions,
  type ResetResult,
  type StepResult,
  type TextEnv,
} from '@agentrl/core';
import {
  type AlfworldGameEntry,
  type AlfworldSplit,
  defaultAlfworldDataDir,
  listAlfworldGames,
  pickAlfworldGame,
} from './data.ts';
import { ALFWORLD_WIN_REWARD } from './env.ts';
import type { AlfworldTaskType } from './game.ts';

/** The bridge's env id. */
export const ALFWORLD_BRIDGE_ENV_ID = 'alfworld/bridge-v1';

/** The protocol version this client speaks. */
export const ALFWORLD_BRIDGE_PROTOCOL = 1;

/** Path of the Python server shipped with the package. */
export function alfworldBridgeServerPath(): string {
  return fileURLToPath(new URL('../python/alfworld_bridge_server.py', import.meta.url));
}

/** Options of {@link createAlfworldBridgeEnv}. */
export interface AlfworldBridgeEnvOptions {
  /** Directory holding `json_2.1.1` (default as `createAlfworldEnv`). */
  readonly dataDir?: string;
  /** Split to draw games from (default `'train'`). */
  readonly split?: AlfworldSplit;
  /** Keep only these task types. */
  readonly taskTypes?: readonly AlfworldTaskType[];
  /** Steps before truncation (default 50). */
  readonly maxSteps?: number;
  /** Python executable (default `python3`). */
  readonly python?: string;
  /** Server script (default: the shipped `python/alfworld_bridge_server.py`). */
  readonly script?: string;
  /** Extra environment variables for the process. */
  readonly env?: Readonly<Record<string, string>>;
  /** Time for the process to start and report ready, ms (default 120,000). */
  readonly startTimeoutMs?: number;
  /** Time for one reset or step answer, ms (default 60,000). */
  readonly requestTimeoutMs?: number;
}

/** One answer of the server. */
interface BridgeAnswer {
  readonly observation: string;
  readonly admissible: string[];
  readonly won: boolean;
}

function parseAnswer(value: Record<string, unknown>): BridgeAnswer {
  const { observation, admissible, won } = value;
  if (
    typeof observation !== 'string' ||
    !Array.isArray(admissible) ||
    admissible.some((a) => typeof a !== 'string') ||
    typeof won !== 'boolean'
  ) {
    throw new AgentRLError(
      'PROTOCOL',
      `ALFWorld bridge: malformed answer ${JSON.stringify(value).slice(0, 300)}`,
    );
  }
  return { observation, admissible: admissible as string[], won };
}

interface Pending {
  readonly resolve: (value: Record<string, unknown>) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** One server process and its request/answer bookkeeping. */
class BridgeProcess {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #pending = new Map<number, Pending>();
  readonly #requestTimeoutMs: number;
  #nextId = 1;
  #buffer = '';
  #stderr = '';
  #dead: Error | null = null;
  #readyReject: (error: Error) => void = () => {};
  readonly ready: Promise<void>;

  constructor(options: AlfworldBridgeEnvOptions) {
    const python = options.python ?? 'python3';
    const script = options.script ?? alfworldBridgeServerPath();
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
    this.#child = spawn(python, [script], {
      env: { ...process.env, PYTHONUNBUFFERED: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let readyResolve: () => void = () => {};
    this.ready = new Promise<void>((resolve, reject) => {
      readyResolve = resolve;
      this.#readyReject = reject;
    });
    // never an unhandled rejection: callers await `ready`
    this.ready.catch(() => {});
    const startTimer = setTimeout(() => {
      this.#fail(
        new AgentRLError(
          'TIMEOUT',
          `ALFWorld bridge: ${python} ${script} did not report ready within ${options.startTimeoutMs ?? 120_000} ms${this.#stderrTail()}`,
        ),
      );
    }, options.startTimeoutMs ?? 120_000);
    let started = false;
    const onReady = (message: Record<string, unknown>): void => {
      started = true;
      clearTimeout(startTimer);
      if (message['ready'] === true && message['protocol'] === ALFWORLD_BRIDGE_PROTOCOL) {
        readyResolve();
      } else {
        const why =
          message['ready'] === true
            ? `speaks protocol ${String(message['protocol'])}, this client speaks ${ALFWORLD_BRIDGE_PROTOCOL}`
            : String(message['error'] ?? 'not ready');
        this.#fail(
          new AgentRLError(
            'BACKEND_UNAVAILABLE',
            `ALFWorld bridge: the Python server is not usable: ${why}`,
          ),
        );
      }
    };
    this.#child.stdout.setEncoding('utf8');
    this.#child.stdout.on('data', (chunk: string) => {
      this.#buffer += chunk;
      for (let nl = this.#buffer.indexOf('\n'); nl >= 0; nl = this.#buffer.indexOf('\n')) {
        const line = this.#buffer.slice(0, nl).trim();
        this.#buffer = this.#buffer.slice(nl + 1);
        if (line.length === 0) continue;
        let message: unknown;
        try {
          message = JSON.parse(line);
        } catch {
          this.#fail(
            new AgentRLError(
              'PROTOCOL',
              `ALFWorld bridge: the server wrote a line that is not JSON: ${line.slice(0, 300)}`,
            ),
          );
          return;
        }
        if (typeof message !== 'object' || message === null || Array.isArray(message)) {
          this.#fail(
            new AgentRLError(
              'PROTOCOL',
              `ALFWorld bridge: the server wrote a non-object line: ${line.slice(0, 300)}`,
            ),
          );
          return;
        }
        const record = message as Record<string, unknown>;
        if (!started) {
          onReady(record);
          continue;
        }
        const id = record['id'];
        const pending = typeof id === 'number' ? this.#pending.get(id) : undefined;
        if (!pending) {
          this.#fail(
            new AgentRLError(
              'PROTOCOL',
              `ALFWorld bridge: answer to no pending request: ${line.slice(0, 300)}`,
            ),
          );
          return;
        }
        this.#pending.delete(id as number);
        clearTimeout(pending.timer);
        if (record['ok'] === true) pending.resolve(record);
        else {
          pending.reject(
            new AgentRLError(
              'BACKEND_FAILURE',
              `ALFWorld bridge: the server failed: ${String(record['error'] ?? 'no message')}`,
            ),
          );
        }
      }
    });
    this.#child.stderr.setEncoding('utf8');
    this.#child.stderr.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-4000);
    });
    this.#child.on('error', (error) => {
      clearTimeout(startTimer);
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
      this.#fail(
        new AgentRLError(
          missing ? 'BACKEND_UNAVAILABLE' : 'BACKEND_FAILURE',
          missing
            ? `ALFWorld bridge: cannot start "${python}" (not found); set the python option to a Python with alfworld installed`
            : `ALFWorld bridge: the process failed: ${error.message}`,
          { cause: error },
        ),
      );
    });
    this.#child.on('exit', (code, signal) => {
      clearTimeout(startTimer);
      this.#fail(
        new AgentRLError(
          started ? 'BACKEND_FAILURE' : 'BACKEND_UNAVAILABLE',
          `ALFWorld bridge: the Python process exited (code ${String(code)}, signal ${String(signal)})${this.#stderrTail()}`,
        ),
      );
    });
    this.#child.stdin.on('error', () => {
      // a broken pipe is reported by the exit handler
    });
  }

  get dead(): boolean {
    return this.#dead !== null;
  }

  #stderrTail(): string {
    const tail = this.#stderr.trim().split('\n').slice(-5).join('\n');
    return tail.length > 0 ? `; stderr: ${tail}` : '';
  }

  /** Marks the process failed: rejects everything pending and kills it. */
  #fail(error: Error): void {
    if (this.#dead === null) this.#dead = error;
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      pending.reject(error);
      this.#pending.delete(id);
    }
    this.#readyReject(error);
    this.kill();
  }

  /** Sends one request and waits for its answer (or the timeout / a crash). */
  async request(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    await this.ready;
    if (this.#dead) throw this.#dead;
    const id = this.#nextId++;
    return await new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        const error = new AgentRLError(
          'TIMEOUT',
          `ALFWorld bridge: no answer to "${String(message['op'])}" within ${this.#requestTimeoutMs} ms; the process was killed and is restarted at the next reset${this.#stderrTail()}`,
        );
        reject(error);
        this.#fail(error);
      }, this.#requestTimeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      this.#child.stdin.write(`${JSON.stringify({ id, ...message })}\n`);
    });
  }

  kill(): void {
    if (this.#child.exitCode === null && this.#child.signalCode === null)
      this.#child.kill('SIGKILL');
  }

  /** Asks the server to stop, then kills it if it has not. */
  async close(): Promise<void> {
    if (!this.dead) {
      try {
        await Promise.race([
          this.request({ op: 'close' }),
          new Promise((r) => setTimeout(r, 2000)),
        ]);
      } catch {
        // already failed: killed below
      }
    }
    this.kill();
  }
}

/**
 * Builds an ALFWorld `TextEnv` backed by upstream ALFWorld in a Python process. Games are chosen
 * exactly as `createAlfworldEnv` chooses them (same seed, same game file).
 */
export function createAlfworldBridgeEnv(options: AlfworldBridgeEnvOptions = {}): TextEnv {
  const maxSteps = options.maxSteps ?? 50;
  if (!Number.isInteger(maxSteps) || maxSteps < 1) {
    throw new ConfigError(
      `alfworld bridge: maxSteps ${String(maxSteps)} must be a positive integer (default 50)`,
      {
        details: { field: 'maxSteps', value: maxSteps },
      },
    );
  }
  const split = options.split ?? 'train';
  const dataDir = options.dataDir ?? defaultAlfworldDataDir();
  const lifecycle = new EpisodeLifecycle(ALFWORLD_BRIDGE_ENV_ID);
  let list: Promise<AlfworldGameEntry[]> | null = null;
  let proc: BridgeProcess | null = null;
  let entry: AlfworldGameEntry | null = null;
  let steps = 0;
  let broken: Error | null = null;

  const processNow = (): BridgeProcess => {
    if (proc === null || proc.dead) {
      proc?.kill();
      proc = new BridgeProcess(options);
    }
    return proc;
  };
  const info = (won: boolean) => ({
    won,
    taskType: (entry as AlfworldGameEntry).taskType,
    gamePath: (entry as AlfworldGameEntry).path,
    steps,
  });

  return {
    id: ALFWORLD_BRIDGE_ENV_ID,
    async reset(reset: ResetOptions): Promise<ResetResult> {
      lifecycle.beginReset();
      if (!Number.isFinite(reset?.seed)) {
        throw new InvalidInputError(
          `alfworld bridge: reset seed ${String(reset?.seed)} must be a finite number`,
          {
            details: { field: 'seed', value: reset?.seed },
          },
        );
      }
      list ??= listAlfworldGames({
        // Only a given folder: the default one's error names where it looked and the fetch command.
        ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
        split,
        ...(options.taskTypes ? { taskTypes: options.taskTypes } : {}),
      });
      const games = await list;
      if (games.length === 0)
        throw new ConfigError(`alfworld bridge: no games in ${dataDir} for split "${split}"`);
      entry = pickAlfworldGame(games, reset);
      steps = 0;
      broken = null;
      let answer: BridgeAnswer;
      try {
        answer = parseAnswer(await processNow().request({ op: 'reset', game: entry.path }));
      } catch (error) {
        broken = error as Error;
        throw error;
      }
      lifecycle.endReset();
      return {
        observation: {
          text: answer.observation,
          anchor: answer.observation,
          admissibleActions: answer.admissible,
        },
        info: info(false),
      };
    },
    async step(action: string): Promise<StepResult> {
      lifecycle.beginStep();
      if (broken !== null || proc === null) {
        throw new AgentRLError(
          'BACKEND_FAILURE',
          `alfworld bridge: this episode lost its Python process (${broken?.message ?? 'not started'}); call reset() to start a new episode`,
          broken ? { cause: broken } : {},
        );
      }
      let answer: BridgeAnswer;
      try {
        answer = parseAnswer(await proc.request({ op: 'step', command: String(action) }));
      } catch (error) {
        broken = error as Error;
        throw error;
      }
      steps++;
      const terminated = answer.won;
      const truncated = !terminated && steps >= maxSteps;
      const result: StepResult = {
        observation: {
          text: answer.observation,
          anchor: answer.observation,
          admissibleActions: answer.admissible,
        },
        reward: answer.won ? ALFWORLD_WIN_REWARD : 0,
        terminated,
        truncated,
        info: info(answer.won),
      };
      lifecycle.endStep(result);
      return result;
    },
    async close(): Promise<void> {
      if (lifecycle.close()) {
        const p = proc;
        proc = null;
        await p?.close();
      }
    },
    async [Symbol.asyncDispose](): Promise<void> {
      await this.close();
    },
  };
}
