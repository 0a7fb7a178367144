/**
 * What a demo's command prints at the end: the headline with intervals (the runner's table, as
 * `agentrl train` prints it), the curve, the phases.
 */
import type { ThreadWork } from '@agentrl/model-tfjs';
import { formatHeadline, type HeadlineRow } from '@agentrl/runner';

/** The parts of a demo's result the summary prints. */
export interface PrintedResult<P> {
  readonly headline: readonly HeadlineRow[];
  readonly curve: readonly P[];
  readonly seconds: Record<string, number>;
  readonly workers: number;
  readonly threadWork: readonly ThreadWork[];
  readonly reportPath: string;
}

/** How a demo words its summary. */
export interface SummaryFormat<P> {
  /** The headline's heading, e.g. `Held-out success (generated households, 95% Wilson interval)`. */
  readonly heading: string;
  /** Text after a headline row's interval (e.g. a score column); none by default. */
  readonly rowSuffix?: (row: HeadlineRow) => string;
  /** What a curve point shows, e.g. `wins` or `wins, score`. */
  readonly curveColumns: string;
  readonly curvePoint: (point: P) => string;
  readonly curveSeparator: string;
}

/** Writes the end-of-run summary; `started` is `performance.now()` at the start of the run. */
export function printSummary<P>(
  out: { write(text: string): unknown },
  result: PrintedResult<P>,
  format: SummaryFormat<P>,
  started: number,
): void {
  out.write(`\n${formatHeadline(format.heading, result.headline, format.rowSuffix ?? (() => ''))}`);
  out.write(
    `Held-out curve (RL iteration: ${format.curveColumns}; 0 = after the warm start): ${result.curve
      .map(format.curvePoint)
      .join(format.curveSeparator)}\n`,
  );
  out.write(
    `Phases (s): ${Object.entries(result.seconds)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}\n`,
  );
  out.write(
    `Threads: ${result.workers + 1}${result.threadWork.length > 0 ? ` (generated rows, micro-batches, scored sequences per thread: ${result.threadWork.map((w) => `${w.generatedRows}/${w.microBatches}/${w.scoredSequences}`).join(', ')})` : ''}\n`,
  );
  out.write(
    `Total ${((performance.now() - started) / 60000).toFixed(1)} min. Report: ${result.reportPath}\n`,
  );
}

/** A curve point as `iteration: wins/episodes`. */
export const winsPoint = (p: { iteration: number; wins: number; episodes: number }): string =>
  `${p.iteration}: ${p.wins}/${p.episodes}`;
