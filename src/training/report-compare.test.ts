import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareReports, comparisonTable, summarize } from './report-compare.ts';

const m = (brier: number, ece: number) => ({ brier, ece, accuracy: 0.5 });
const report = (shift: number) => ({
  leaveTasksOut: { noul: { model: m(0.2 + shift, 0.05), uniform: m(0.25, 0) } },
  caldec: { choice: { model: m(0.12, 0.02 + shift) } },
  perTask: {
    sst2: { leaveTaskOut: { model: m(0.1 + shift, 0.03) }, shipped: { model: m(0.01, 0.01) } },
    trec: { shipped: { model: m(0.05, 0.01) } },
  },
  skill: { pooled: [{ name: 'pooled noul', brier: 0.2, ece: 0.07 }], sets: [{ name: 'sst2', brier: 0.11, ece: 0.04 }] },
  zeroShot: { pooled: [{ map: 'content', source: 'pooled', kind: 'all', brier: 0.23, ece: 0.08 }] },
});

describe('training reports compared', () => {
  it('pairs every held-out number both reports measured, and none measured on the training rows', () => {
    const rows = compareReports(report(0), report(0.01));
    assert.deepEqual(
      rows.map((r) => r.name),
      [
        'leave-tasks-out noul',
        'CalDec choice',
        'set left out: sst2',
        'skill pooled noul',
        'skill sets sst2',
        'zero-shot map content (pooled, all)',
      ],
    );
    const lto = rows[0];
    assert.ok(lto && Math.abs(lto.after.brier - lto.before.brier - 0.01) < 1e-12);
  });

  it('counts the rows within the tolerances and names the largest change', () => {
    const s = summarize(compareReports(report(0), report(0.004)));
    assert.equal(s.rows, 6);
    // +0.004 Brier on two rows (leave-tasks-out, sst2): outside +-0.003; +0.004 ECE on CalDec: inside +-0.005
    assert.equal(s.withinBrier, 4);
    assert.equal(s.withinEce, 6);
    assert.ok(Math.abs(s.maxBrier.delta - 0.004) < 1e-12);
    assert.equal(s.maxBrier.name, 'leave-tasks-out noul');
  });

  it('prints one markdown row per pair with signed changes', () => {
    const table = comparisonTable(compareReports(report(0), report(0.01)), ['f32', 'int8']);
    assert.match(table, /^\| held out \| Brier f32 \| Brier int8 \|/);
    assert.match(table, /\| set left out: sst2 \| 0\.1000 \| 0\.1100 \| \+0\.0100 \|/);
    assert.equal(table.split('\n').length, 2 + 6);
  });
});
