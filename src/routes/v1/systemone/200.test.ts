import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Transaction } from 'kysely';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';
import type { Db } from '../../../db/open.ts';
import type { Database } from '../../../db/schema.ts';
import type { DecisionEngine } from '../../../engines/engine.ts';
import { createFakeEngine } from '../../../engines/fake/fake-engine.ts';

/**
 * Holds every transaction on `db` (the usage recorder writes in one) until release(); reads and
 * single statements go through. held() counts the transactions that waited.
 */
function holdTransactions(db: Db) {
  const real = db.kysely;
  let release = () => {};
  const open = new Promise<void>((resolve) => {
    release = resolve;
  });
  let held = 0;
  db.kysely = new Proxy(real, {
    get(target, prop) {
      if (prop !== 'transaction') {
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return () => ({
        execute: async <T>(fn: (tx: Transaction<Database>) => Promise<T>) => {
          held += 1;
          await open;
          return target.transaction().execute(fn);
        },
      });
    },
  });
  return {
    held: () => held,
    release: () => {
      release();
      db.kysely = real;
    },
  };
}

describe('POST /v1/systemone 200', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  const questions = {
    refund: {
      type: 'noul',
      instructions: 'Does the customer ask for money back?',
      criteria: { true: 'asks for a refund', false: null },
    },
    team: {
      type: 'choice',
      instructions: 'Which team?',
      criteria: { billing: 'charges and refunds', tech: null, other: { note: 'anything else' } },
    },
    urgency: { type: 'score', instructions: 'How urgent?', criteria: ['low', 'medium', { level: 'high' }] },
  };

  test('says which answers abstained: the per-answer x_abstained flag and the x-brier-abstained header', async () => {
    const fake = createFakeEngine();
    // The first question gets the uniform answer (every question, on the state "all uniform").
    const uniform = (k: number) => Array<number>(k).fill(1 / k);
    const engine: DecisionEngine = {
      ...fake,
      async answer(request, signal) {
        const out = await fake.answer(request, signal);
        const all = request.state.text === 'all uniform';
        const probabilities = out.probabilities.map((p, i) => (i === 0 || all ? uniform(p.length) : p));
        return { ...out, probabilities };
      },
    };
    const app = await makeTestApp({ engine });
    try {
      const res = await app.req('/v1/systemone', {
        body: {
          state: 's',
          questions: { 'why not?': questions.team, refund: { type: 'noul', criteria: { true: 'x' } } },
        },
      });
      const body = await res.json();
      assert.equal(body.answers['why not?'].x_abstained, true);
      // Uniform, in hundredths that sum to 1: the hundredth left over goes to the first option.
      assert.deepEqual(body.answers['why not?'].probabilities, { billing: 0.34, tech: 0.33, other: 0.33 });
      assert.equal(res.headers.get('x-brier-abstained'), 'why%20not%3F');
      assert.equal(body.answers.refund.x_abstained, Math.abs(body.answers.refund.noul - 0.5) <= 0.02);
      // Ids that do not fit in 2,048 characters: the header says `*`, the flags say which.
      const many = Object.fromEntries(
        Array.from({ length: 200 }, (_, i) => [`${'q'.repeat(20)}${i}`, { type: 'noul' }]),
      );
      const all = await app.req('/v1/systemone', { body: { state: 'all uniform', questions: many } });
      assert.equal(all.headers.get('x-brier-abstained'), '*');
      const answers = Object.values((await all.json()).answers) as { x_abstained: boolean }[];
      assert.ok(answers.every((a) => a.x_abstained));
    } finally {
      await app.close();
    }
  });

  test('answers every question type with the wire shapes, ids verbatim', async () => {
    const res = await t.req('/v1/systemone', { body: { state: 'I was charged twice. Please refund.', questions } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('x-typesafe-request-id') ?? '', /^req_[0-9a-f]{32}$/);
    assert.equal(res.headers.get('x-request-id'), res.headers.get('x-typesafe-request-id'));
    const body = await res.json();
    assert.equal(body.model, 'brier-fake-3.0.0');
    assert.deepEqual(Object.keys(body.answers).sort(), ['refund', 'team', 'urgency']);
    const { refund, team, urgency } = body.answers;
    assert.equal(refund.type, 'noul');
    assert.ok(refund.noul >= 0 && refund.noul <= 1);
    assert.deepEqual(Object.keys(refund), ['type', 'noul', 'x_abstained']);
    for (const a of [refund, team, urgency]) assert.equal(typeof a.x_abstained, 'boolean');
    assert.equal(team.type, 'choice');
    assert.deepEqual(Object.keys(team.probabilities), ['billing', 'tech', 'other']);
    const best = Object.entries(team.probabilities as Record<string, number>).sort((a, b) => b[1] - a[1])[0]?.[0];
    assert.equal(team.choice, best);
    assert.equal(urgency.type, 'score');
    assert.deepEqual(urgency.legend, { '0': 'low', '1': 'medium', '2': { level: 'high' } });
    assert.deepEqual(Object.keys(urgency.probabilities), ['0', '1', '2']);
    for (const p of [team.probabilities, urgency.probabilities]) {
      // In integer hundredths: exactly 1.00.
      const sum = Object.values(p as Record<string, number>).reduce((a, b) => a + Math.round(b * 100), 0);
      assert.equal(sum, 100);
      for (const x of Object.values(p as Record<string, number>)) assert.equal(Math.round(x * 100) / 100, x);
    }
    // The score is the expectation of the rounded probabilities, exactly (in hundredths).
    const expected = Object.entries(urgency.probabilities as Record<string, number>).reduce(
      (a, [i, p]) => a + Number(i) * Math.round(p * 100),
      0,
    );
    assert.equal(Math.round(urgency.score * 100), expected);
    assert.ok(body.usage.input_tokens > 0);
    assert.equal(body.usage.output_tokens, 2 + 3 + 3);
  });

  test('same request, same answers', async () => {
    const a = await (await t.req('/v1/systemone', { body: { state: 'same', questions } })).json();
    const b = await (await t.req('/v1/systemone', { body: { state: 'same', questions } })).json();
    assert.deepEqual(a.answers, b.answers);
  });

  test('object and array states are read as compact JSON; the AI SDK parts form is unwrapped', async () => {
    const obj = { ticket: { text: 'charged twice' }, tags: ['billing'] };
    const asObject = await (await t.req('/v1/systemone', { body: { state: obj, questions } })).json();
    const asText = await (await t.req('/v1/systemone', { body: { state: JSON.stringify(obj), questions } })).json();
    assert.deepEqual(asObject.answers, asText.answers);
    const parts = await (
      await t.req('/v1/systemone', { body: { state: [{ type: 'json', value: obj }], questions } })
    ).json();
    assert.deepEqual(parts.answers, asObject.answers);
    const textPart = await (
      await t.req('/v1/systemone', { body: { state: [{ type: 'text', text: 'hello there' }], questions } })
    ).json();
    const plain = await (await t.req('/v1/systemone', { body: { state: 'hello there', questions } })).json();
    assert.deepEqual(textPart.answers, plain.answers);
    const array = await t.req('/v1/systemone', { body: { state: [1, 'two', { three: 3 }], questions } });
    assert.equal(array.status, 200);
  });

  test('model aliases and the exact id resolve to the served model; unknown fields are ignored', async () => {
    for (const model of ['brier-latest', 'jev-latest', 'jev-preview', 'brier-fake-3.0.0', undefined]) {
      const res = await t.req('/v1/systemone', { body: { model, state: 's', questions, extra: { anything: true } } });
      assert.equal(res.status, 200, String(model));
      assert.equal((await res.json()).model, 'brier-fake-3.0.0');
    }
  });

  test('255 choice options and 10 score levels are accepted', async () => {
    const criteria = Object.fromEntries(Array.from({ length: 255 }, (_, i) => [`opt${i}`, null]));
    const levels = Array.from({ length: 10 }, (_, i) => `level ${i}`);
    const res = await t.req('/v1/systemone', {
      body: { state: 's', questions: { c: { type: 'choice', criteria }, s: { type: 'score', criteria: levels } } },
    });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(Object.keys(body.answers.c.probabilities).length, 255);
    assert.equal(Object.keys(body.answers.s.probabilities).length, 10);
  });

  test('usage is metered per request, off the hot path', { timeout: 20_000 }, async (ctx) => {
    // An app of its own, with every usage write held until the response has arrived: a meter that
    // wrote inline would wait for it forever (this test then times out), and one that wrote before
    // answering would leave a row behind by then.
    const own = await makeTestApp();
    const writes = holdTransactions(own.db);
    ctx.after(async () => {
      writes.release();
      await own.close();
    });
    const res = await own.req('/v1/systemone', { body: { state: 'metered', questions } });
    assert.equal(res.status, 200);
    const early = await own.db.kysely.selectFrom('usage_event').select('id').execute();
    assert.deepEqual(early, [], 'no usage row is written before the response');
    const flushed = own.usage.flush();
    assert.ok(writes.held() >= 1, 'the usage write waits on the held transaction');
    writes.release();
    await flushed;

    const rows = await own.db.kysely.selectFrom('usage_event').selectAll().where('key_id', '=', own.keyId).execute();
    assert.ok(rows.length >= 1);
    const last = rows.at(-1);
    assert.equal(last?.status, 200);
    assert.equal(last?.questions, 3);
    assert.ok(Number(last?.input_tokens) > 0);
    const key = await own.db.kysely
      .selectFrom('api_key')
      .select('last_used_at')
      .where('id', '=', own.keyId)
      .executeTakeFirst();
    assert.ok(Number(key?.last_used_at) > 0);
  });
});

describe("POST /v1/systemone 200: Brier's extensions on the wire", () => {
  const asked = {
    state: 's',
    questions: {
      refund: { type: 'noul', instructions: 'abstain: refund?' },
      team: { type: 'choice', criteria: { billing: null, tech: null } },
      urgency: { type: 'score', criteria: ['low', 'high'] },
    },
  };
  /** The fields System One defines, per answer type; everything else must start with x_. */
  const SPEC: Record<string, string[]> = {
    noul: ['type', 'noul'],
    choice: ['type', 'choice', 'probabilities', 'confidence'],
    score: ['type', 'score', 'legend', 'probabilities', 'confidence'],
  };

  test('every field outside the spec is x_-prefixed (x_abstained), at the top and in every answer', async () => {
    const t = await makeTestApp();
    try {
      const body = await (await t.req('/v1/systemone', { body: asked })).json();
      assert.deepEqual(Object.keys(body).sort(), ['answers', 'model', 'usage']);
      for (const answer of Object.values(body.answers) as Record<string, unknown>[]) {
        const extra = Object.keys(answer).filter((k) => !SPEC[String(answer.type)]?.includes(k));
        assert.deepEqual(extra, ['x_abstained']);
      }
      assert.equal(body.answers.refund.x_abstained, true);
    } finally {
      await t.close();
    }
  });

  test('BRIER_LEGACY_EXTENSION_FIELDS=on: the deprecated unprefixed names too, with the same values', async () => {
    const t = await makeTestApp({ legacyExtensionFields: true });
    try {
      const res = await t.req('/v1/systemone', { body: asked });
      const body = await res.json();
      for (const answer of Object.values(body.answers) as Record<string, unknown>[]) {
        assert.equal(typeof answer.x_abstained, 'boolean');
        assert.equal(answer.abstained, answer.x_abstained);
        assert.equal('answered_by' in answer, false, 'answered_by only where x_answered_by is');
      }
      assert.equal(res.headers.get('x-brier-abstained'), 'refund');
    } finally {
      await t.close();
    }
  });
});
