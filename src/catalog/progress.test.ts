import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createProgressBar, formatBytes, formatDuration, formatProgressLine } from './progress.ts';

function recorder(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, write: (text: string) => writes.push(text) } };
}

describe('formatBytes and formatDuration', () => {
  it('prints decimal units and short durations', () => {
    assert.equal(formatBytes(512), '512 B');
    assert.equal(formatBytes(1_117_320_736), '1.12 GB');
    assert.equal(formatBytes(470_200_000), '470 MB');
    assert.equal(formatBytes(12_345_678), '12.3 MB');
    assert.equal(formatBytes(999_990), '1.00 MB');
    assert.equal(formatDuration(52), '52s');
    assert.equal(formatDuration(125), '2m05s');
    assert.equal(formatDuration(3725), '1h02m');
    assert.equal(formatDuration(Number.POSITIVE_INFINITY), '?');
  });
});

describe('formatProgressLine', () => {
  it('shows bar, percent, bytes, rate and ETA when the total is known', () => {
    const line = formatProgressLine(
      { label: 'qwen', phase: 'download', bytes: 250_000_000, totalBytes: 1_000_000_000, bytesPerSecond: 10_000_000 },
      8,
    );
    assert.equal(line, 'qwen  [##------]   25.0%  250 MB / 1.00 GB  10.0 MB/s  ETA 1m15s');
  });

  it('shows bytes and rate only when the total is unknown, and names the verify phase', () => {
    assert.equal(
      formatProgressLine({ label: 'm', phase: 'download', bytes: 2_000_000, bytesPerSecond: 1_000_000 }),
      'm  2.00 MB  1.00 MB/s',
    );
    assert.match(formatProgressLine({ label: 'm', phase: 'verify', bytes: 1, totalBytes: 2 }), /^m verifying sha256/);
  });
});

describe('createProgressBar', () => {
  it('redraws one line in place on a TTY, throttled, and ends it on finish', () => {
    const { writes, stream } = recorder(true);
    let clock = 0;
    const bar = createProgressBar({ stream, label: 'm', now: () => clock, intervalMs: 100 });
    bar.update({ phase: 'download', bytes: 0, totalBytes: 1000, resumedFrom: 0 });
    clock = 50;
    bar.update({ phase: 'download', bytes: 100, totalBytes: 1000, resumedFrom: 0 }); // throttled
    clock = 1000;
    bar.update({ phase: 'download', bytes: 500, totalBytes: 1000, resumedFrom: 0 });
    assert.equal(writes.length, 2);
    for (const write of writes) assert.ok(write.startsWith('\r') && write.endsWith('\x1b[K'), JSON.stringify(write));
    assert.match(writes[1] ?? '', /50\.0%.*500 B\/s.*ETA 1s/);
    clock = 1010;
    bar.update({ phase: 'download', bytes: 1000, totalBytes: 1000, resumedFrom: 0 }); // complete: drawn
    assert.match(writes.at(-1) ?? '', /100\.0%/);
    bar.finish();
    assert.equal(writes.at(-1), '\n');
  });

  it('prints plain periodic lines when not a TTY', () => {
    const { writes, stream } = recorder(false);
    let clock = 0;
    const bar = createProgressBar({ stream, label: 'm', now: () => clock });
    for (let i = 0; i <= 20; i++) {
      clock = i * 1000;
      bar.update({ phase: 'download', bytes: i * 100, totalBytes: 2000, resumedFrom: 0 });
    }
    bar.finish();
    assert.ok(writes.every((line) => line.endsWith('\n') && !line.includes('\r')));
    // t=0, 5 s, 10 s, 15 s, and the completed 20 s
    assert.equal(writes.length, 5);
    assert.match(writes.at(-1) ?? '', /100\.0%/);
  });
});
