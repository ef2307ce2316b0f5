import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plainWording, readQuestion } from '../engines/embedded/reading.ts';
import type { DecisionQuestion } from '../engines/request.ts';
import type { Example } from './data.ts';
import { generateItems, labelPhrase } from './templates.ts';

const choiceRow = (id: string, target: number): Example => {
  const question: DecisionQuestion = {
    type: 'choice',
    instructions: 'Which topic does this news article belong to?',
    options: ['World', 'Sports', 'Business', 'Sci/Tech', 'Health'].map((label) => ({ label, description: null })),
  };
  return {
    id,
    task: 'ag_news',
    request: { state: { text: `article ${id}`, json: undefined }, questions: [question] },
    target,
    split: 'eval',
    raw: { type: 'choice', instructions: question.instructions, criteria: {} },
  };
};

describe('templates', () => {
  const rows = Array.from({ length: 40 }, (_, i) => choiceRow(`ag_news/${i}`, i % 5));
  const items = generateItems('ag_news', rows);

  it('asks each row its own label (yes) and another (no), as topic questions, deterministically', () => {
    const plain = items.filter((g) => g.kind === 'topic' && !g.negated);
    assert.equal(plain.length, 80);
    assert.equal(plain.filter((g) => g.example.target === 1).length, 40);
    for (const g of plain)
      assert.equal(readQuestion(g.example.request.questions[0] as DecisionQuestion, false).family, 'topic');
    assert.deepEqual(generateItems('ag_news', rows), items);
  });

  it('words some as negations whose plain wording is their twin, with the target flipped', () => {
    const negated = items.filter((g) => g.negated);
    assert.ok(negated.length > 0);
    for (const n of negated) {
      const twin = items.find((g) => g.pair === n.pair && !g.negated);
      assert.ok(twin);
      const text = n.example.request.questions[0]?.instructions ?? '';
      assert.deepEqual(plainWording(text), { plain: twin.example.request.questions[0]?.instructions, negated: true });
      assert.equal(n.example.target, 1 - twin.example.target);
    }
  });

  it('builds subsets with a residual option that is the answer where the row label is left out', () => {
    const subsets = items.filter((g) => g.kind === 'subset');
    assert.equal(subsets.length, 40);
    for (const g of subsets) {
      const q = g.example.request.questions[0] as DecisionQuestion;
      const row = rows.find((r) => g.example.id === `${r.id}#subset`) as Example;
      const own = row.request.questions[0]?.options[row.target]?.label;
      const kept = q.options.some((o) => o.label === own);
      assert.equal(q.options[g.example.target]?.label === own, kept);
      if (!kept) assert.equal(g.example.target, q.options.length - 1);
      assert.ok(readQuestion(q, false).residual?.at(-1), 'the last option reads as "none of these"');
    }
  });

  it('reads a code label by its description', () => {
    assert.equal(labelPhrase('NUM', 'a number'), 'a number');
    assert.equal(labelPhrase('book_flight', null), 'book flight');
    assert.equal(labelPhrase('World', 'world news'), 'World (world news)');
  });
});
