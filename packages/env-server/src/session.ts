/**
 * One WebSocket session: one env from the registry, its messages served one at a time in the order
 * they came, one reply each (none to `close`). A session knows nothing of sockets: it talks through
 * a {@link Channel}, so a failure in one session (a bad frame, an env that throws, a client that
 * vanishes) is answered or ended inside it and never reaches another.
 */
import { isAgentRLError, type TextEnv } from '@agentrl/core';
import {
  type ClientMessage,
  errorReply,
  isWireProblem,
  observationReply,
  parseClientMessage,
  stateReply,
  type WireProblem,
  wireObservation,
} from './wire.ts';

/** How a session writes to its client. */
export interface Channel {
  /** Sends one text frame (dropped when the socket is gone). */
  send(frame: string): void;
  /** Closes the socket with a WebSocket close code and a short reason. */
  close(code: number, reason: string): void;
}

/**
 * The WebSocket close codes a socket of this server ends with. 1000–1011 are defined in
 * https://www.rfc-editor.org/rfc/rfc6455#section-7.4.1, 1013 is registered in
 * https://www.iana.org/assignments/websocket/websocket.xhtml, and
 * https://www.rfc-editor.org/rfc/rfc6455#section-7.4.2 leaves 4000–4999 to applications:
 * `expired` and `factoryError` are this server's own.
 */
export const CLOSE_CODES = {
  normal: 1000,
  goingAway: 1001,
  messageTooBig: 1009,
  internalError: 1011,
  tryAgainLater: 1013,
  expired: 4008,
  factoryError: 4500,
} as const;

/** Where a warning about a session goes (the server's logger). */
export type WarnFn = (message: string) => void;

/** What a session needs from its server. */
export interface SessionContext {
  readonly id: number;
  readonly envId: string;
  readonly channel: Channel;
  /** Messages that may wait for their reply before `TOO_MANY_PENDING`. */
  readonly maxPending: number;
  /** Largest frame answered. */
  readonly maxMessageBytes: number;
  readonly warn: WarnFn;
  /** Called once when the session has ended and its env is closed. */
  readonly onEnd: (session: Session) => void;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A session: created when a socket opens, ended by `close`, disconnect, expiry or shutdown. */
export class Session {
  readonly id: number;
  /** `performance.now()` of the latest frame (the server's idle sweep reads it). */
  lastActive = performance.now();
  /** Steps answered with an observation, over every episode of the session. */
  stepsServed = 0;
  private readonly context: SessionContext;
  private env: TextEnv | null = null;
  private chain: Promise<void>;
  private pending = 0;
  private ended = false;
  private resets = 0;
  private episodeId: string | null = null;
  private stepCount = 0;
  private seed: number | null = null;
  private task: number | string | null = null;
  private done = false;

  constructor(context: SessionContext, createEnv: () => Promise<TextEnv>) {
    this.context = context;
    this.id = context.id;
    this.chain = createEnv().then(
      (env) => {
        if (this.ended) void this.closeEnv(env);
        else this.env = env;
      },
      (error: unknown) => {
        this.context.channel.send(
          errorReply(
            {
              code: 'FACTORY_ERROR',
              message: `cannot create ${context.envId}: ${errorMessage(error)}`,
            },
            { factory_name: context.envId },
          ),
        );
        void this.end(CLOSE_CODES.factoryError, 'env could not be created');
      },
    );
  }

  /** Whether the session has ended (no more replies). */
  get isEnded(): boolean {
    return this.ended;
  }

  /** Takes one frame from the socket. Never throws. */
  receive(frame: string, bytes: number): void {
    if (this.ended) return;
    this.lastActive = performance.now();
    if (bytes > this.context.maxMessageBytes) {
      this.reply(
        errorReply({
          code: 'MESSAGE_TOO_LARGE',
          message: `message of ${bytes} bytes is over this server's limit of ${this.context.maxMessageBytes} bytes (option maxMessageBytes)`,
        }),
      );
      return;
    }
    const parsed = parseClientMessage(frame);
    if (isWireProblem(parsed)) {
      this.reply(errorReply(parsed));
      return;
    }
    if (parsed.type === 'close') {
      void this.end(CLOSE_CODES.normal, 'closed by the client');
      return;
    }
    if (this.pending >= this.context.maxPending) {
      this.reply(
        errorReply({
          code: 'TOO_MANY_PENDING',
          message: `${this.pending} messages are already waiting for their replies (limit ${this.context.maxPending}); send one message and wait for its reply`,
        }),
      );
      return;
    }
    this.pending++;
    this.chain = this.chain.then(async () => {
      try {
        if (!this.ended) this.reply(await this.serve(parsed));
      } catch (error) {
        this.context.warn(`session ${this.id}: ${errorMessage(error)}`);
        this.reply(errorReply({ code: 'SESSION_ERROR', message: errorMessage(error) }));
        void this.end(CLOSE_CODES.internalError, 'session error');
      } finally {
        this.pending--;
      }
    });
  }

  /** Answers a frame outside the message order (a limit or a malformed frame). */
  private reply(frame: string): void {
    if (!this.ended) this.context.channel.send(frame);
  }

  private async serve(message: Exclude<ClientMessage, { type: 'close' }>): Promise<string> {
    const env = this.env;
    if (env === null) throw new Error('the env of this session is gone');
    if (message.type === 'state')
      return stateReply({
        episode_id: this.episodeId,
        step_count: this.stepCount,
        env: this.context.envId,
        seed: this.seed,
        task: this.task,
        done: this.done,
      });
    try {
      if (message.type === 'reset') {
        const { seed, task, episode_id } = message.data;
        const result = await env.reset(task !== undefined ? { seed, task } : { seed });
        this.resets++;
        this.episodeId = episode_id ?? `${this.id}-${this.resets}`;
        this.stepCount = 0;
        this.seed = seed;
        this.task = task ?? null;
        this.done = false;
        return observationReply(
          wireObservation(result.observation, result.info, { terminated: false, truncated: false }),
          null,
          false,
        );
      }
      const result = await env.step(message.data.action);
      this.stepCount++;
      this.stepsServed++;
      this.done = result.terminated || result.truncated;
      return observationReply(
        wireObservation(result.observation, result.info, result),
        result.reward,
        this.done,
      );
    } catch (error) {
      return errorReply(
        { code: 'EXECUTION_ERROR', message: errorMessage(error) },
        isAgentRLError(error) ? { agentrl_code: error.code } : {},
      );
    }
  }

  private async closeEnv(env: TextEnv): Promise<void> {
    try {
      await env.close();
    } catch (error) {
      this.context.warn(`session ${this.id}: closing its env failed: ${errorMessage(error)}`);
    }
  }

  /**
   * Ends the session: optionally sends a last error frame, closes the socket, waits for the
   * message being served, closes the env. Idempotent.
   */
  async end(code: number, reason: string, last?: WireProblem): Promise<void> {
    if (this.ended) return;
    if (last !== undefined) this.context.channel.send(errorReply(last));
    this.ended = true;
    this.context.channel.close(code, reason);
    await this.chain.catch(() => undefined);
    const env = this.env;
    this.env = null;
    if (env !== null) await this.closeEnv(env);
    this.context.onEnd(this);
  }
}
