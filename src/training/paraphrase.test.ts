import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ReportFile } from '../engines/embedded/artifacts.ts';
import { createEmbeddedEngine, DEFAULT_MODEL_DIR } from '../engines/embedded/index.ts';
import { readGroups, runSuite, scoreGroup, summarize } from './paraphrase.ts';

describe('paraphrase suite', () => {
  test('has at least 30 groups of at least 3 wordings, covering all three types, each with a valid expected answer', () => {
    const groups = readGroups();
    assert.ok(groups.length >= 30, `${groups.length} groups`);
    assert.equal(new Set(groups.map((g) => g.id)).size, groups.length, 'ids are unique');
    for (const type of ['noul', 'choice', 'score']) {
      assert.ok(groups.filter((g) => g.question.type === type).length >= 5, `at least 5 ${type} groups`);
    }
    for (const g of groups) {
      assert.ok(g.wordings.length >= 3, `${g.id}: ${g.wordings.length} wordings`);
      const q = g.question;
      const keys =
        q.type === 'noul'
          ? ['false', 'true']
          : q.type === 'choice'
            ? Object.keys(q.criteria)
            : q.criteria.map((_, i) => String(i));
      assert.ok(keys.includes(g.expected), `${g.id}: expected ${g.expected} is one of ${keys.join(', ')}`);
    }
  });

  test('scores a group: the largest change of any probability, right answers with ties and abstentions counted wrong', () => {
    const group = readGroups()[0];
    assert.ok(group && group.question.type === 'choice');
    const labels = Object.keys(group.question.criteria);
    const answer = (ps: number[]) => ({
      type: 'choice' as const,
      choice: labels[0] ?? '',
      confidence: 0,
      probabilities: Object.fromEntries(labels.map((l, i) => [l, ps[i] ?? 0])),
      x_abstained: ps.every((p) => Math.abs(p - 1 / labels.length) <= 0.02),
    });
    const third = 1 / 3;
    const r = scoreGroup({ ...group, expected: labels[0] ?? '' }, [
      answer([0.8, 0.1, 0.1]),
      answer([third, third, third]),
      answer([0.5, 0.5, 0]),
    ]);
    assert.equal(r.change, 0.47); // option 0: 0.8 - 1/3
    assert.equal(r.correct, 1);
    assert.equal(r.abstained, 1);
    assert.equal(summarize([r]).maxChange, 0.47);
    // An abstention is never right, even where its rounded numbers (summing to 1) put the expected option first.
    const rounded = scoreGroup({ ...group, expected: labels[0] ?? '' }, [answer([0.34, 0.33, 0.33])]);
    assert.deepEqual([rounded.correct, rounded.abstained], [0, 1]);
  });

  test("the shipped model card states the suite's numbers, as the shipped model answers them", async () => {
    const report = JSON.parse(readFileSync(join(DEFAULT_MODEL_DIR, 'report.json'), 'utf8')) as ReportFile;
    const card = readFileSync(join(DEFAULT_MODEL_DIR, 'MODEL_CARD.md'), 'utf8');
    const engine = createEmbeddedEngine();
    await engine.load();
    const { summary } = await runSuite(engine).finally(() => engine.close());
    // the same numbers, up to one rounding step (the encoder's float maths may differ across CPUs)
    const close = (a: unknown, b: unknown, at: string): void => {
      if (typeof a === 'number' && typeof b === 'number') assert.ok(Math.abs(a - b) <= 0.01, `${at}: ${a} != ${b}`);
      else if (a && b && typeof a === 'object' && typeof b === 'object') {
        assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort(), at);
        for (const [k, v] of Object.entries(a)) close(v, (b as Record<string, unknown>)[k], `${at}.${k}`);
      } else assert.equal(a, b, at);
    };
    close(report.paraphrase, summary, 'paraphrase');
    const stated = report.paraphrase;
    assert.ok(stated);
    assert.ok(
      card.includes(`mean ${stated.meanChange.toFixed(3)} `) &&
        card.includes(`max ${stated.maxChange.toFixed(2)} in ${stated.maxGroup} `),
      'the card states the mean and the largest change',
    );
  });
});
