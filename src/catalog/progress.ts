/**
 * A download progress display: one redrawn bar on a TTY (percent, bytes, rate, ETA), plain lines
 * every few seconds elsewhere (CI logs, pipes), so that logs stay readable.
 */
import type { PullProgress } from './pull.ts';

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressBarOptions {
  stream: ProgressStream;
  /** Shown first on every line, e.g. the model name. */
  label: string;
  /** Defaults to `stream.isTTY`. */
  tty?: boolean;
  /** Milliseconds between redraws: default 100 on a TTY, 5000 otherwise. */
  intervalMs?: number;
  /** Clock in milliseconds (tests). */
  now?: () => number;
}

export interface ProgressBar {
  update(progress: PullProgress): void;
  /** Draws the last state (if not yet drawn) and ends the line. */
  finish(): void;
}

/** Rate is measured over this window, so that it follows the current speed. */
const RATE_WINDOW_MS = 10_000;

export function createProgressBar(options: ProgressBarOptions): ProgressBar {
  const tty = options.tty ?? options.stream.isTTY === true;
  const interval = options.intervalMs ?? (tty ? 100 : 5000);
  const now = options.now ?? Date.now;
  let samples: { at: number; bytes: number }[] = [];
  let phase: PullProgress['phase'] | undefined;
  let last: PullProgress | undefined;
  let lastDrawAt = Number.NEGATIVE_INFINITY;
  let drawnLast = true;
  let lineOpen = false;

  const draw = (progress: PullProgress, at: number) => {
    const line = formatProgressLine({
      label: options.label,
      phase: progress.phase,
      bytes: progress.bytes,
      totalBytes: progress.totalBytes,
      bytesPerSecond: rate(samples),
    });
    if (tty) {
      const columns = options.stream.columns;
      const fitted = columns !== undefined && columns > 0 ? line.slice(0, columns - 1) : line;
      options.stream.write(`\r${fitted}\x1b[K`);
      lineOpen = true;
    } else {
      options.stream.write(`${line}\n`);
    }
    lastDrawAt = at;
    drawnLast = true;
  };

  return {
    update(progress) {
      const at = now();
      if (progress.phase !== phase) {
        if (tty && lineOpen) options.stream.write('\n');
        lineOpen = false;
        phase = progress.phase;
        samples = [];
        lastDrawAt = Number.NEGATIVE_INFINITY;
      }
      samples.push({ at, bytes: progress.bytes });
      while (samples.length > 2 && (samples[1]?.at ?? at) <= at - RATE_WINDOW_MS) samples.shift();
      last = progress;
      drawnLast = false;
      const complete = progress.totalBytes !== undefined && progress.bytes >= progress.totalBytes;
      if (at - lastDrawAt >= interval || complete) draw(progress, at);
    },
    finish() {
      if (last !== undefined && !drawnLast) draw(last, now());
      if (tty && lineOpen) options.stream.write('\n');
      lineOpen = false;
    },
  };
}

function rate(samples: readonly { at: number; bytes: number }[]): number | undefined {
  const first = samples[0];
  const last = samples[samples.length - 1];
  if (first === undefined || last === undefined || last.at - first.at < 250) return undefined;
  return ((last.bytes - first.bytes) * 1000) / (last.at - first.at);
}

export interface ProgressLine {
  label: string;
  phase: PullProgress['phase'];
  bytes: number;
  totalBytes?: number;
  bytesPerSecond?: number;
}

/** One line: `label  [bar]  42.0%  470.2 MB / 1.12 GB  12.3 MB/s  ETA 52s` (parts shown when known). */
export function formatProgressLine(line: ProgressLine, barWidth = 24): string {
  const parts = [line.phase === 'verify' ? `${line.label} verifying sha256` : line.label];
  const total = line.totalBytes;
  if (total !== undefined && total > 0) {
    const fraction = Math.min(1, line.bytes / total);
    const filled = Math.round(fraction * barWidth);
    parts.push(`[${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}]`);
    parts.push(`${(fraction * 100).toFixed(1).padStart(5)}%`);
    parts.push(`${formatBytes(line.bytes)} / ${formatBytes(total)}`);
  } else {
    parts.push(formatBytes(line.bytes));
  }
  if (line.bytesPerSecond !== undefined && line.bytesPerSecond > 0) {
    parts.push(`${formatBytes(line.bytesPerSecond)}/s`);
    if (total !== undefined && line.bytes < total) {
      parts.push(`ETA ${formatDuration((total - line.bytes) / line.bytesPerSecond)}`);
    }
  }
  return parts.join('  ');
}

/** Decimal units, as Hugging Face lists file sizes: 1117320736 -> "1.12 GB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${Math.round(bytes)} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 'B';
  for (const next of units) {
    // 999.96 kB would print as "1000 kB": move up a unit before rounding can reach 1000
    if (value < 999.5) break;
    value /= 1000;
    unit = next;
  }
  return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ${unit}`;
}

/** 52 -> "52s", 125 -> "2m05s", 3725 -> "1h02m". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
