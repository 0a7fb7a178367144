/**
 * Typed errors with stable string codes. Code that handles an agentrl failure switches on
 * `error.code`, never on the message; messages name the field, the bad value and the fix.
 */

/** Every stable error code used across agentrl. */
export type ErrorCode =
  | 'BAD_CONFIG'
  | 'BAD_INPUT'
  | 'BAD_DATA'
  | 'ENV_FINISHED'
  | 'ENV_CLOSED'
  | 'ENV_NOT_RESET'
  | 'UNKNOWN_ENV'
  | 'DUPLICATE_ENV'
  | 'NOT_FOUND'
  | 'BACKEND_UNAVAILABLE'
  | 'BACKEND_FAILURE'
  | 'PROTOCOL'
  | 'TIMEOUT'
  | 'WEIGHT_SYNC'
  | 'ABORTED'
  | 'DOWNLOAD_FAILED'
  | 'UNREACHABLE'
  | 'TRUNCATED'
  | 'CHECKSUM_MISMATCH'
  | 'USAGE'
  | 'RUN_EXISTS'
  | 'NOTHING_TO_RESUME'
  | 'NOT_A_RUN'
  | 'PORT_IN_USE'
  | 'NOT_WRITABLE'
  | 'ENV_NOT_READY';

/** Options accepted by every agentrl error. */
export interface AgentRLErrorOptions {
  /** The underlying error, kept for stack traces and `error.cause`. */
  cause?: unknown;
  /** Machine-readable facts about the failure (field name, value, path...). */
  details?: Readonly<Record<string, unknown>>;
}

/** Base class of every error agentrl throws. */
export class AgentRLError extends Error {
  /** Stable code; safe to switch on. */
  readonly code: ErrorCode;
  /** Machine-readable facts about the failure. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: AgentRLErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = options.details ?? {};
  }
}

/** A configuration or option value is invalid (`BAD_CONFIG`). */
export class ConfigError extends AgentRLError {
  constructor(message: string, options?: AgentRLErrorOptions) {
    super('BAD_CONFIG', message, options);
  }
}

/** An argument passed to a function is invalid (`BAD_INPUT`). */
export class InvalidInputError extends AgentRLError {
  constructor(message: string, options?: AgentRLErrorOptions) {
    super('BAD_INPUT', message, options);
  }
}

/** A data file (game, catalogue, checkpoint...) is missing or malformed (`BAD_DATA`). */
export class DataError extends AgentRLError {
  constructor(message: string, options?: AgentRLErrorOptions) {
    super('BAD_DATA', message, options);
  }
}

/** `step()` was called on an episode that already terminated or was truncated (`ENV_FINISHED`). */
export class EnvFinishedError extends AgentRLError {
  constructor(envId: string, options?: AgentRLErrorOptions) {
    super(
      'ENV_FINISHED',
      `${envId}: step() called after the episode ended (terminated or truncated); call reset() to start a new episode`,
      options,
    );
  }
}

/** `step()` or `reset()` was called on a closed environment (`ENV_CLOSED`). */
export class EnvClosedError extends AgentRLError {
  constructor(envId: string, options?: AgentRLErrorOptions) {
    super('ENV_CLOSED', `${envId}: the environment is closed; create a new one`, options);
  }
}

/** `step()` was called before the first `reset()` (`ENV_NOT_RESET`). */
export class EnvNotResetError extends AgentRLError {
  constructor(envId: string, options?: AgentRLErrorOptions) {
    super(
      'ENV_NOT_RESET',
      `${envId}: step() called before reset(); call reset({ seed }) first`,
      options,
    );
  }
}

/** True when `value` is an agentrl error, optionally with the given code. */
export function isAgentRLError(value: unknown, code?: ErrorCode): value is AgentRLError {
  return value instanceof AgentRLError && (code === undefined || value.code === code);
}
