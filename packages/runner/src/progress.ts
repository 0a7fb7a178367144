/**
 * Console progress for long work (the CLI's sink; libraries never print): a cli-progress bar on a
 * terminal, one line per iteration elsewhere (CI logs).
 */
import cliProgress from 'cli-progress';
import type { Metrics } from './metrics.ts';
import type { TrainerEvent } from './trainer.ts';

/** A progress display: feed it trainer events; `stop()` when done. */
export interface ConsoleProgress {
  readonly onEvent: (event: TrainerEvent) => void;
  /** Progress of a simple counted phase (warm start, evaluation). */
  task(label: string, total: number): { tick(extra?: string): void; done(): void };
  stop(): void;
}

function pct(v: number | undefined): string {
  return v === undefined ? '  -  ' : `${(v * 100).toFixed(1)}%`;
}

function line(m: Metrics): string {
  const parts = [`iter ${m.iteration}`];
  if (m['val/success'] !== undefined) parts.push(`val ${pct(m['val/success'])}`);
  if (m['train/success'] !== undefined) parts.push(`train ${pct(m['train/success'])}`);
  if (m['train/validActionRatio'] !== undefined)
    parts.push(`valid ${pct(m['train/validActionRatio'])}`);
  if (m['update/loss'] !== undefined) parts.push(`loss ${(m['update/loss'] as number).toFixed(4)}`);
  if (m['update/keptFraction'] !== undefined) parts.push(`kept ${pct(m['update/keptFraction'])}`);
  if (m['update/gradNorm'] !== undefined)
    parts.push(`gnorm ${(m['update/gradNorm'] as number).toPrecision(3)}`);
  if (m['policy/klBeforeAfter'] !== undefined)
    parts.push(`kl ${(m['policy/klBeforeAfter'] as number).toExponential(1)}`);
  if (m['time/iteration'] !== undefined)
    parts.push(`${(m['time/iteration'] as number).toFixed(1)}s`);
  return parts.join(' | ');
}

/** Creates the console progress display on `stream` (default stderr). */
export function createConsoleProgress(
  total: number,
  stream: NodeJS.WriteStream = process.stderr,
): ConsoleProgress {
  const tty = stream.isTTY === true;
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          stream,
          format: ' {bar} {value}/{total} iterations | {phase} | {summary} | eta {eta_formatted}',
          hideCursor: true,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let started = false;
  let summary = 'starting';
  const write = (text: string) => {
    if (bar) bar.update({ summary: text });
    else stream.write(`${text}\n`);
  };
  return {
    onEvent(event) {
      if (bar && !started) {
        bar.start(total, 0, { phase: 'starting', summary });
        started = true;
      }
      if (event.type === 'phase') bar?.update({ phase: event.phase });
      else if (event.type === 'iteration') {
        summary = line(event.metrics);
        if (bar) bar.update(Math.min(total, event.iteration + 1), { summary });
        else write(summary);
      } else if (event.type === 'resumed') {
        if (bar)
          bar.update(event.iteration, { summary: `resumed at iteration ${event.iteration}` });
        else write(`resumed at iteration ${event.iteration}`);
      }
    },
    task(label, count) {
      const sub = tty
        ? new cliProgress.SingleBar(
            {
              stream,
              format: ` ${label} {bar} {value}/{total} {extra} | eta {eta_formatted}`,
              hideCursor: true,
            },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
      sub?.start(count, 0, { extra: '' });
      let n = 0;
      const every = Math.max(1, Math.floor(count / 10));
      return {
        tick(extra = '') {
          n++;
          if (sub) sub.update(n, { extra });
          else if (n % every === 0 || n === count)
            stream.write(`${label} ${n}/${count} ${extra}\n`);
        },
        done() {
          sub?.stop();
        },
      };
    },
    stop() {
      if (started) bar?.stop();
    },
  };
}
