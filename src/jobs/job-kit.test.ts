import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WireQuestion } from '../systemone/protocol.ts';
import { templateOf } from '../systemone/templates.ts';
import { templateName, templateNamer } from './job-kit.ts';

const TEAM: WireQuestion = {
  type: 'choice',
  instructions: 'Which team should handle this ticket?',
  criteria: { billing: null, tech: null },
};

test("fitting progress names a template by its question's words, not its id", () => {
  const id = templateOf(TEAM).id;
  const named = templateNamer((x) => (x === id ? TEAM : undefined));
  assert.equal(named(`${id}: fitting probes`), '"Which team should handle this ticket?": fitting probes');
  assert.equal(named('tpl_00000000000000000000: unknown'), 'tpl_00000000000000000000: unknown', 'an unknown id stays');
});

test('a template name is cut at 60 characters, and says its type without instructions', () => {
  const long = templateName({ type: 'noul', instructions: `Is ${'very '.repeat(20)}urgent?` });
  assert.equal(long.length, 62);
  assert.ok(long.endsWith('…"'));
  assert.equal(templateName({ type: 'score', criteria: ['bad', 'good'] }), 'the score question without instructions');
  assert.equal(templateName({ type: 'noul', instructions: { topic: 'refunds' } }), '"{"topic":"refunds"}"');
});
