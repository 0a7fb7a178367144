/**
 * The errors the `agentrl` command line reports as one line (no stack trace): usage mistakes
 * (exit 2), run folders that cannot be used as asked, and the system errors a newcomer meets (a
 * port in use, a folder that cannot be written) turned into a line naming the port or the folder
 * and the fix.
 */
import { AgentRLError, type AgentRLErrorOptions, isAgentRLError } from '@agentrl/core';

/** A command line that cannot be run as written: a missing config, a bad flag value (`USAGE`). */
export class UsageError extends AgentRLError {
  constructor(message: string, options?: AgentRLErrorOptions) {
    super('USAGE', message, options);
  }
}

/**
 * A run folder that cannot be used as asked: it already holds a run (`RUN_EXISTS`), holds no
 * checkpoint to resume (`NOTHING_TO_RESUME`), is no run folder (`NOT_A_RUN`), or a checkpoint in
 * it does not exist (`NOT_FOUND`).
 */
export class RunFolderError extends AgentRLError {
  constructor(
    code: 'RUN_EXISTS' | 'NOTHING_TO_RESUME' | 'NOT_A_RUN' | 'NOT_FOUND',
    message: string,
    options?: AgentRLErrorOptions,
  ) {
    super(code, message, options);
  }
}

/** A port that cannot be listened on (`PORT_IN_USE`) or a folder that cannot be written (`NOT_WRITABLE`). */
export class ResourceError extends AgentRLError {
  constructor(
    code: 'PORT_IN_USE' | 'NOT_WRITABLE',
    message: string,
    options?: AgentRLErrorOptions,
  ) {
    super(code, message, options);
  }
}

interface SystemError {
  readonly code: string;
  readonly syscall?: string;
  readonly path?: string;
  readonly port?: number;
  readonly address?: string;
}

function systemErrorOf(error: unknown): SystemError | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code)
    ? (error as unknown as SystemError)
    : undefined;
}

const NOT_WRITABLE_CODES = new Set(['EACCES', 'EPERM', 'EROFS']);

/** The error `agentrl serve` / `env serve` report when `port` on `host` cannot be listened on. */
export function listenError(error: unknown, port: number, host: string): unknown {
  const sys = systemErrorOf(error);
  if (sys?.code === 'EADDRINUSE')
    return new ResourceError(
      'PORT_IN_USE',
      `port ${port} on ${host} is already in use by another program: stop that program, or pick another port with --port N (--port 0 picks a free one)`,
      { details: { field: '--port', value: port }, cause: error },
    );
  if (sys?.code === 'EACCES' || sys?.code === 'EADDRNOTAVAIL')
    return new ResourceError(
      'PORT_IN_USE',
      `cannot listen on port ${port} of ${host} (${sys.code}${sys.code === 'EACCES' ? ': ports below 1024 need privileges' : ': no such local address'}): pick another port with --port N${sys.code === 'EADDRNOTAVAIL' ? ' or another address with --host' : ''}`,
      { details: { field: '--port', value: port }, cause: error },
    );
  return error;
}

/** The error to report when the folder `dir` (a run folder, `what`) cannot be created or written. */
export function notWritableError(error: unknown, dir: string, flag: string): unknown {
  const sys = systemErrorOf(error);
  if (sys === undefined || !NOT_WRITABLE_CODES.has(sys.code)) return error;
  return new ResourceError(
    'NOT_WRITABLE',
    `cannot write the folder ${dir} (${sys.code}${sys.path !== undefined && sys.path !== dir ? ` on ${sys.path}` : ''}): give a folder you can write with ${flag} DIR, or fix its permissions`,
    { details: { field: flag, value: dir }, cause: error },
  );
}

/**
 * The one line `agentrl <command>` prints for `error`, with its exit code: 2 for usage errors,
 * else 1. A system error that slipped through (a file it cannot write) still gets one line
 * naming the path.
 */
export function reportLine(command: string, error: unknown): { line: string; exitCode: number } {
  let e = error;
  const sys = systemErrorOf(e);
  if (!isAgentRLError(e) && sys !== undefined && NOT_WRITABLE_CODES.has(sys.code) && sys.path)
    e = notWritableError(e, sys.path, command === 'data' ? '--dir' : '--run-dir');
  if (!isAgentRLError(e) && sys?.code === 'EADDRINUSE')
    e = listenError(e, sys.port ?? 0, sys.address ?? 'this machine');
  const code = isAgentRLError(e) ? ` [${e.code}]` : '';
  const message = e instanceof Error ? e.message : String(e);
  return {
    line: `agentrl ${command} failed${code}: ${message}\n`,
    exitCode: isAgentRLError(e, 'USAGE') ? 2 : 1,
  };
}
