/**
 * The community's System One conformance suite, jevcompat (PyPI, MIT; spec 0.1, jevcompat 0.1.1), as
 * tests of our own: its cases, sent to Brier on the embedded engine through `app.request()`, and its
 * checks, ported from its validate.py and checks.py, one test per requirement (33 MUST, 15 SHOULD).
 * `npm run conformance:jevcompat` runs the suite itself where Python is present; this file shows the
 * same result without it. Where Brier promises more than the suite asks, the check here is the
 * stricter one: distributions sum to exactly 1.00 (in integer hundredths), `score` is exactly the
 * expectation of the rounded probabilities, `confidence` the formula on them up to its own rounding,
 * and the semantic requirements hold exactly (the engine is deterministic).
 *
 * As in jevcompat, every case runs first (before()), recording which requirements it exercised and
 * which it found broken, with the exchange; each test then asserts its requirement was exercised and
 * never broken.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { choice, noul, score, TypeSafeClient } from '@typesafe-ai/sdk';
import { createEmbeddedEngine } from '../../src/engines/embedded/index.ts';
import { makeTestApp, type TestApp } from '../harness.ts';

/** jevcompat's requirements: id, level, title (its spec.py, in order). */
const REQUIREMENTS: [string, 'MUST' | 'SHOULD', string][] = [
  ['http.endpoint', 'MUST', 'POST /v1/systemone answers valid requests with 200'],
  ['http.json', 'MUST', '200 bodies are JSON'],
  ['http.content-type', 'SHOULD', 'responses declare a JSON media type'],
  ['http.models', 'SHOULD', 'GET /v1/models lists models'],
  ['auth.ignored-when-off', 'MUST', 'without auth, an Authorization header is accepted'],
  ['auth.bearer', 'MUST', 'the key is read from Authorization: Bearer'],
  ['auth.missing', 'SHOULD', 'a missing key gets 401/403 with authentication_error'],
  ['auth.invalid', 'SHOULD', 'a wrong key gets 401 with authentication_error'],
  ['request.state', 'MUST', 'state may be a string, object or array'],
  ['request.model-alias', 'MUST', 'model "jev-latest" is accepted'],
  ['request.multi', 'MUST', 'several questions of mixed types in one request'],
  ['request.question-ids', 'MUST', 'any non-empty string is a question id'],
  ['request.unicode', 'MUST', 'non-ASCII text is accepted and option names round-trip'],
  ['request.unknown-fields', 'SHOULD', 'unknown top-level fields are ignored'],
  ['request.structured-text', 'MUST', 'instructions and descriptions may be objects or arrays'],
  ['noul.criteria', 'MUST', 'noul criteria may be absent, null, two- or one-sided'],
  ['noul.no-instructions', 'SHOULD', 'a noul without instructions is accepted'],
  ['choice.null-description', 'MUST', 'an option description may be null'],
  ['choice.options', 'MUST', '2 to 255 options are accepted'],
  ['score.levels', 'MUST', '2 to 10 levels are accepted'],
  ['score.map-rejected', 'SHOULD', 'map-form score criteria are rejected with 4xx'],
  ['response.envelope', 'MUST', 'model, answers and usage are present'],
  ['response.usage', 'MUST', 'token counts are non-negative integers'],
  ['response.answer-ids', 'MUST', 'one answer per question id, none extra'],
  ['response.answer-type', 'MUST', "each answer's type matches its question"],
  ['response.finite', 'MUST', 'no NaN or Infinity'],
  ['response.extensions', 'SHOULD', 'extra fields are prefixed x_'],
  ['noul.answer', 'MUST', 'noul is a probability in [0, 1]'],
  ['choice.answer', 'MUST', 'choice, probabilities and confidence are present'],
  ['choice.probability-keys', 'MUST', 'probability keys are exactly the option names'],
  ['choice.distribution', 'MUST', 'probabilities are in [0, 1] and sum to 1'],
  ['choice.argmax', 'MUST', 'choice is the most probable option'],
  ['score.answer', 'MUST', 'score, legend, probabilities and confidence are present'],
  ['score.legend', 'MUST', 'legend maps "0".."n-1" to the level descriptions'],
  ['score.probability-keys', 'MUST', 'probability keys are "0".."n-1"'],
  ['score.distribution', 'MUST', 'probabilities are in [0, 1] and sum to 1'],
  ['score.expectation', 'MUST', 'score is the expectation of the probabilities'],
  ['confidence.range', 'MUST', 'confidence is in [0, 1]'],
  ['confidence.formula', 'SHOULD', 'confidence follows the reference formula'],
  ['errors.json', 'SHOULD', 'error bodies are JSON'],
  ['errors.no-5xx', 'MUST', 'bad requests never get a 5xx'],
  ['errors.reject-invalid', 'SHOULD', 'invalid requests get a 4xx, not an answer'],
  ['errors.validation-shape', 'SHOULD', 'validation errors are 422 with detail[]'],
  ['errors.shape', 'SHOULD', 'other errors carry detail.error_type and detail.message'],
  ['semantics.question-id', 'MUST', 'renaming a question id does not change its answer'],
  ['semantics.batching', 'SHOULD', 'other questions in the request do not change an answer'],
  ['semantics.question-order', 'SHOULD', 'question order does not change answers'],
  ['dropin.sdk-python', 'MUST', 'the official Python SDK parses every answer type'],
];

/** The one requirement that cannot apply: Brier always needs a key (jevcompat skips it too). */
const NOT_APPLICABLE = 'auth.ignored-when-off';

const TICKET =
  "Hi, I was charged twice for my March invoice (order #4471) and the refund I was promised last week still hasn't arrived. I've emailed three times. Please fix this today or I will dispute the charge with my bank.";
const NOUL = { type: 'noul', instructions: 'Is the customer asking for money back?' };
const CHOICE = {
  type: 'choice',
  instructions: 'Which team should handle this ticket?',
  criteria: {
    Billing: 'Payments, invoices, refunds',
    Technical: 'Bugs, outages, integrations',
    Sales: 'Pricing questions, upgrades, new contracts',
  },
};
const SCORE = {
  type: 'score',
  instructions: 'How frustrated is the customer?',
  criteria: ['Calm', 'Frustrated', 'Very angry'],
};
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Question = { [key: string]: Json };
type Payload = { [key: string]: Json };

interface Exchange {
  status: number;
  contentType: string;
  text: string;
  json: unknown;
  jsonError: string | null;
}

interface Finding {
  req: string;
  message: string;
  where: string;
}

describe('jevcompat 0.1.1 (spec 0.1), mirrored: Brier on the embedded engine', () => {
  let t: TestApp;
  const exercised = new Map<string, Set<string>>();
  const findings: Finding[] = [];

  const exercise = (name: string, ...reqs: string[]) => {
    for (const r of reqs) exercised.set(r, (exercised.get(r) ?? new Set()).add(name));
  };
  const violate = (name: string, req: string, message: string, where = '') => {
    exercise(name, req);
    findings.push({ req, message, where: `${name}${where ? ` ${where}` : ''}` });
  };

  async function send(body: Payload | string, auth: string | false = t.key, path = '/v1/systemone'): Promise<Exchange> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (auth !== false) headers.authorization = `Bearer ${auth}`;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const res = await t.app.request(path, { method: 'POST', headers, body: text });
    return exchangeOf(res);
  }

  async function exchangeOf(res: Response): Promise<Exchange> {
    const text = await res.text();
    let json: unknown = null;
    let jsonError: string | null = null;
    try {
      json = JSON.parse(text);
    } catch (error) {
      jsonError = (error as Error).message;
    }
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, json, jsonError };
  }

  const payload = (questions: { [id: string]: Question }, state: Json = TICKET, extra: Payload = {}): Payload => ({
    model: 'jev-latest',
    state,
    questions,
    ...extra,
  });

  // ------------------------------------------------------------------ checks (validate.py)

  function checkJson(name: string, x: Exchange, error: boolean): void {
    const media = x.contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    if (media !== 'application/json' && !media.endsWith('+json')) {
      violate(name, 'http.content-type', `Content-Type is ${JSON.stringify(x.contentType)}`);
    }
    if (x.jsonError !== null) violate(name, error ? 'errors.json' : 'http.json', x.jsonError);
    if (/\b(NaN|-?Infinity)\b/.test(x.text.replace(/"(?:[^"\\]|\\.)*"/g, '""'))) {
      violate(name, 'response.finite', 'a NaN or Infinity in the body');
    }
  }

  const RESPONSE_REQS = [
    'http.endpoint',
    'http.json',
    'http.content-type',
    'response.envelope',
    'response.usage',
    'response.answer-ids',
    'response.answer-type',
    'response.finite',
    'response.extensions',
  ];
  const TYPE_REQS: Record<string, string[]> = {
    noul: ['noul.answer'],
    choice: [
      'choice.answer',
      'choice.probability-keys',
      'choice.distribution',
      'choice.argmax',
      'confidence.range',
      'confidence.formula',
    ],
    score: [
      'score.answer',
      'score.legend',
      'score.probability-keys',
      'score.distribution',
      'score.expectation',
      'confidence.range',
      'confidence.formula',
    ],
  };
  const TOP_LEVEL = ['model', 'answers', 'usage'];
  const ANSWER_FIELDS: Record<string, string[]> = {
    noul: ['type', 'noul'],
    choice: ['type', 'choice', 'probabilities', 'confidence'],
    score: ['type', 'score', 'legend', 'probabilities', 'confidence'],
  };
  const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  const hundredths = (v: number) => Math.round(v * 100);
  const round2 = (v: number) => Math.round((v + Math.sign(v) * Number.EPSILON) * 100) / 100;

  /** Values in `keys` order; a distribution must be in [0, 1], 2-decimal, and sum to exactly 1.00. */
  function distribution(name: string, req: string, probs: Record<string, unknown>, keys: string[], where: string) {
    const values = keys.map((k) => probs[k]);
    if (!values.every((v) => isNumber(v) && v >= 0 && v <= 1)) {
      violate(name, req, `a probability outside [0, 1]: ${JSON.stringify(probs).slice(0, 120)}`, where);
      return null;
    }
    const numbers = values as number[];
    if (!numbers.every((v) => hundredths(v) / 100 === v)) violate(name, req, 'a value not in hundredths', where);
    const sum = numbers.reduce((a, v) => a + hundredths(v), 0);
    if (sum !== 100) violate(name, req, `probabilities sum to ${sum / 100}, not exactly 1.00`, where);
    return numbers;
  }

  function validateAnswer(name: string, question: Question, answer: unknown, where: string): void {
    if (typeof answer !== 'object' || answer === null) {
      violate(name, 'response.answer-type', 'not an object', where);
      return;
    }
    const a = answer as Record<string, unknown>;
    const type = String(question.type);
    if (a.type !== type) {
      violate(name, 'response.answer-type', `type ${a.type}, question ${type}`, where);
      return;
    }
    const extra = Object.keys(a).filter((k) => !ANSWER_FIELDS[type]?.includes(k) && !k.startsWith('x_'));
    if (extra.length > 0) violate(name, 'response.extensions', `unprefixed field(s) ${extra.join(', ')}`, where);
    if (type === 'noul') {
      if (!(isNumber(a.noul) && a.noul >= 0 && a.noul <= 1)) violate(name, 'noul.answer', `noul ${a.noul}`, where);
      return;
    }
    const n =
      type === 'choice' ? Object.keys(question.criteria as object).length : (question.criteria as Json[]).length;
    const keys =
      type === 'choice' ? Object.keys(question.criteria as object) : Array.from({ length: n }, (_, i) => String(i));
    const required =
      type === 'choice'
        ? ['choice', 'probabilities', 'confidence']
        : ['score', 'legend', 'probabilities', 'confidence'];
    for (const k of required) if (!(k in a)) violate(name, `${type}.answer`, `missing ${k}`, where);
    const probs = (a.probabilities ?? {}) as Record<string, unknown>;
    const got = Object.keys(probs);
    if (got.length !== keys.length || !keys.every((k) => Object.hasOwn(probs, k))) {
      violate(name, `${type}.probability-keys`, `keys ${got.slice(0, 5).join(', ')}`, where);
      return;
    }
    const values = distribution(name, `${type}.distribution`, probs, keys, where);
    const c = a.confidence;
    if (!(isNumber(c) && c >= 0 && c <= 1)) violate(name, 'confidence.range', `confidence ${c}`, where);
    if (!values) return;
    const top = Math.max(...values);
    if (type === 'choice') {
      const picked = typeof a.choice === 'string' ? keys.indexOf(a.choice) : -1;
      if (picked < 0) violate(name, 'choice.argmax', `choice ${JSON.stringify(a.choice)} is not an option`, where);
      else if ((values[picked] ?? 0) < top)
        violate(name, 'choice.argmax', `choice has ${values[picked]}, top ${top}`, where);
      const reference = Math.min(1, Math.max(0, (n * top - 1) / (n - 1)));
      if (isNumber(c) && Math.abs(c - reference) > 0.005 + 1e-9) {
        violate(
          name,
          'confidence.formula',
          `confidence ${c}; the reference formula gives ${reference.toFixed(3)}`,
          where,
        );
      }
      return;
    }
    const legend = a.legend as Record<string, unknown> | undefined;
    const levels = question.criteria as Json[];
    if (
      !legend ||
      Object.keys(legend).length !== n ||
      !keys.every((k, i) => JSON.stringify(legend[k]) === JSON.stringify(levels[i]))
    ) {
      violate(name, 'score.legend', `legend ${JSON.stringify(legend)?.slice(0, 120)}`, where);
    }
    const expected = values.reduce((acc, v, i) => acc + i * hundredths(v), 0);
    if (!isNumber(a.score) || hundredths(a.score) !== expected || hundredths(a.score) / 100 !== a.score) {
      violate(name, 'score.expectation', `score ${a.score}; Σ i·p = ${expected / 100}`, where);
    }
    const spreadU = keys.reduce((acc, _, i) => acc + Math.abs(i - (n - 1) / 2) / n, 0);
    const atMode = (m: number) => Math.max(0, 1 - values.reduce((acc, v, i) => acc + v * Math.abs(i - m), 0) / spreadU);
    const modes = values.flatMap((v, i) => (v === top ? [i] : []));
    if (isNumber(c) && !modes.some((m) => Math.abs(c - round2(atMode(m))) < 1e-9)) {
      violate(
        name,
        'confidence.formula',
        `confidence ${c}; the reference formula gives ${atMode(modes[0] ?? 0)}`,
        where,
      );
    }
  }

  function validateSuccess(name: string, request: Payload, x: Exchange): void {
    checkJson(name, x, false);
    if (typeof x.json !== 'object' || x.json === null) {
      violate(name, 'response.envelope', 'not an object');
      return;
    }
    const body = x.json as Record<string, unknown>;
    for (const k of TOP_LEVEL) if (!(k in body)) violate(name, 'response.envelope', `missing ${k}`);
    if (typeof body.model !== 'string') violate(name, 'response.envelope', 'model is not a string');
    const extra = Object.keys(body).filter((k) => !TOP_LEVEL.includes(k) && !k.startsWith('x_'));
    if (extra.length > 0) violate(name, 'response.extensions', `unprefixed top-level field(s) ${extra.join(', ')}`);
    const usage = (body.usage ?? {}) as Record<string, unknown>;
    for (const k of ['input_tokens', 'output_tokens']) {
      const v = usage[k];
      if (!(Number.isInteger(v) && (v as number) >= 0)) violate(name, 'response.usage', `${k} is ${v}`);
    }
    const answers = (body.answers ?? {}) as Record<string, unknown>;
    const questions = request.questions as Record<string, Question>;
    const missing = Object.keys(questions).filter((q) => !Object.hasOwn(answers, q));
    const added = Object.keys(answers).filter((q) => !Object.hasOwn(questions, q));
    if (missing.length + added.length > 0) {
      violate(name, 'response.answer-ids', `missing ${missing.join(', ')}; extra ${added.join(', ')}`);
    }
    for (const [id, q] of Object.entries(questions)) {
      if (Object.hasOwn(answers, id)) validateAnswer(name, q, answers[id], `answers[${JSON.stringify(id)}]`);
    }
  }

  function validateValidationError(name: string, x: Exchange): void {
    checkJson(name, x, true);
    if (x.status !== 422) violate(name, 'errors.validation-shape', `status ${x.status}; validation failures use 422`);
    const detail = (x.json as { detail?: unknown } | null)?.detail;
    const ok =
      Array.isArray(detail) &&
      detail.length > 0 &&
      detail.every(
        (d: { loc?: unknown; msg?: unknown; type?: unknown }) =>
          Array.isArray(d.loc) && d.loc[0] === 'body' && typeof d.msg === 'string' && typeof d.type === 'string',
      );
    if (!ok)
      violate(name, 'errors.validation-shape', `body is not {"detail": [{loc, msg, type}]}: ${x.text.slice(0, 160)}`);
  }

  function validateErrorShape(name: string, x: Exchange, req = 'errors.shape', errorType?: string): void {
    checkJson(name, x, true);
    const detail = (x.json as { detail?: { error_type?: unknown; message?: unknown } } | null)?.detail;
    if (typeof detail?.error_type !== 'string' || typeof detail.message !== 'string') {
      violate(name, req, `body is not {"detail": {error_type, message}}: ${x.text.slice(0, 160)}`);
      return;
    }
    if (errorType && detail.error_type !== errorType) violate(name, req, `error_type ${detail.error_type}`);
  }

  // ------------------------------------------------------------------ the three shapes of case (checks.py)

  async function expectAnswer(name: string, body: Payload, ...reqs: string[]): Promise<Record<string, unknown> | null> {
    const x = await send(body);
    exercise(name, ...reqs);
    if (x.status >= 500) violate(name, 'errors.no-5xx', `a valid request got ${x.status}`);
    if (x.status !== 200) {
      for (const r of reqs.length > 0 ? reqs : ['http.endpoint'])
        violate(name, r, `valid request got ${x.status}: ${x.text.slice(0, 200)}`);
      return null;
    }
    const types = Object.values(body.questions as Record<string, Question>).map((q) => String(q.type));
    exercise(name, ...RESPONSE_REQS, ...types.flatMap((ty) => TYPE_REQS[ty] ?? []));
    validateSuccess(name, body, x);
    return (x.json as { answers: Record<string, unknown> }).answers;
  }

  async function expectReject(name: string, body: Payload | string, ...reqs: string[]): Promise<void> {
    const x = await send(body);
    exercise(name, 'errors.no-5xx', 'errors.reject-invalid', ...reqs);
    if (x.status >= 500) return violate(name, 'errors.no-5xx', `invalid request got ${x.status}`);
    if (x.status < 400) {
      for (const r of ['errors.reject-invalid', ...reqs])
        violate(name, r, `invalid request was answered with ${x.status}`);
      return;
    }
    exercise(name, 'http.content-type', 'errors.json', 'errors.validation-shape');
    validateValidationError(name, x);
  }

  async function expectAnswerOr4xx(name: string, body: Payload): Promise<void> {
    const x = await send(body);
    exercise(name, 'errors.no-5xx');
    if (x.status >= 500) return violate(name, 'errors.no-5xx', `got ${x.status}`);
    if (x.status === 200) {
      const types = Object.values(body.questions as Record<string, Question>).map((q) => String(q.type));
      exercise(name, ...RESPONSE_REQS, ...types.flatMap((ty) => TYPE_REQS[ty] ?? []));
      return validateSuccess(name, body, x);
    }
    exercise(name, 'http.content-type', 'errors.json');
    if (x.status === 413) return checkJson(name, x, true);
    exercise(name, 'errors.validation-shape');
    validateValidationError(name, x);
  }

  // ------------------------------------------------------------------ the cases

  before(async () => {
    t = await makeTestApp({ engine: createEmbeddedEngine() });

    // preflight: the route, the key (Bearer) and the SDKs' model name.
    exercise('preflight', 'auth.bearer', 'request.model-alias');
    await expectAnswer('preflight', payload({ q: NOUL }), 'http.endpoint', 'auth.bearer', 'request.model-alias');

    // models-endpoint
    const models = await exchangeOf(await t.req('/v1/models'));
    exercise('models-endpoint', 'http.models');
    const list = (models.json as { models?: Record<string, unknown>[] } | null)?.models;
    if (
      models.status !== 200 ||
      !Array.isArray(list) ||
      list.length === 0 ||
      !list.every((m) => ['name', 'description', 'release_date'].every((k) => typeof m[k] === 'string'))
    ) {
      violate('models-endpoint', 'http.models', `GET /v1/models: ${models.status} ${models.text.slice(0, 160)}`);
    }

    await expectAnswer('noul-basic', payload({ refund: NOUL }), 'http.endpoint');
    const sides: Record<string, Json> = {
      both: { true: 'They want a refund or chargeback', false: 'They want anything else' },
      'true-only': { true: 'They want a refund or chargeback' },
      'false-only': { false: 'They are only asking a question' },
      null: null,
    };
    for (const [label, criteria] of Object.entries(sides)) {
      await expectAnswer(`noul-criteria:${label}`, payload({ refund: { ...NOUL, criteria } }), 'noul.criteria');
    }
    await expectAnswer(
      'noul-no-instructions',
      payload({
        threat: { type: 'noul', criteria: { true: 'The customer threatens a chargeback', false: 'No threat' } },
      }),
      'noul.no-instructions',
    );
    await expectAnswer('choice-basic', payload({ team: CHOICE }), 'choice.options');
    await expectAnswer(
      'choice-null-description',
      payload({ team: { ...CHOICE, criteria: { Billing: null, Technical: null, Sales: null } } }),
      'choice.null-description',
    );
    for (const n of [2, 26, 64, 128, 255]) {
      const criteria: Json =
        n === 2
          ? { Billing: 'Payments, invoices, refunds', Technical: 'Bugs and outages' }
          : {
              Billing: 'Payments, invoices, refunds',
              ...Object.fromEntries(
                Array.from({ length: n - 1 }, (_, i) => [
                  `Queue ${String(i + 1).padStart(3, '0')}`,
                  `Tickets routed to queue ${i + 1}`,
                ]),
              ),
            };
      const q = { type: 'choice', instructions: 'Which queue should this ticket go to?', criteria };
      await expectAnswer(`choice-options:${n}`, payload({ queue: q }), 'choice.options');
    }
    for (const n of [2, 3, 5, 10]) {
      const levels =
        n === 2
          ? ['Calm', 'Very angry']
          : n === 3
            ? SCORE.criteria
            : Array.from({ length: n }, (_, i) => `Level ${i}: ${i === 0 ? 'calm' : 'angrier'}`);
      await expectAnswer(`score-levels:${n}`, payload({ anger: { ...SCORE, criteria: levels } }), 'score.levels');
    }
    // A question the state cannot settle: the confidence formula on a spread distribution.
    await expectAnswer(
      'choice-ambiguous',
      payload(
        {
          team: {
            type: 'choice',
            instructions: "Which of these colours is the writer's favourite?",
            criteria: { Red: null, Green: null, Blue: null, Yellow: null, Purple: null },
          },
          mood: {
            type: 'score',
            instructions: 'How much does the writer enjoy jazz?',
            criteria: ['Not at all', 'A little', 'Somewhat', 'A lot', 'More than anything'],
          },
        },
        'Hello.',
      ),
    );
    const states: Record<string, Json> = {
      string: TICKET,
      object: { subject: 'Charged twice', body: TICKET, customer: { plan: 'pro', tickets: 3 } },
      array: ['Charged twice for March.', 'Refund promised last week, not received.', 'Will dispute the charge.'],
    };
    for (const [label, state] of Object.entries(states)) {
      await expectAnswer(`state-types:${label}`, payload({ refund: NOUL }, state), 'request.state');
    }
    const structured: Record<string, Question> = {
      noul: {
        type: 'noul',
        instructions: { task: 'Decide whether the customer wants money back', include: ['refunds', 'chargebacks'] },
        criteria: {
          true: { examples: ['refund me', "I'll dispute this"] },
          false: ['questions', 'complaints without a request'],
        },
      },
      choice: {
        type: 'choice',
        instructions: ['Route the ticket.', 'Pick exactly one team.'],
        criteria: { Billing: { owns: ['invoices', 'refunds'] }, Technical: ['bugs', 'outages'], Sales: 'Pricing' },
      },
      score: {
        type: 'score',
        instructions: { scale: 'frustration' },
        criteria: [{ label: 'Calm' }, { label: 'Frustrated' }, { label: 'Very angry', signals: ['threats'] }],
      },
    };
    for (const [label, q] of Object.entries(structured)) {
      await expectAnswer(`structured-text:${label}`, payload({ q }), 'request.structured-text');
    }
    await expectAnswer('multi-question', payload({ refund: NOUL, team: CHOICE, anger: SCORE }), 'request.multi');
    for (const id of ['ticket-1', 'q.2', 'with space', '질문', '🎯']) {
      await expectAnswer(`question-ids:${id}`, payload({ [id]: NOUL }), 'request.question-ids');
    }
    const unicode = { '환불 요청': '고객이 돈을 돌려받기를 원함', '배송 문의': '배송 상태를 물음', '🙂 기타': '그 외' };
    const kind = await expectAnswer(
      'unicode',
      payload(
        { kind: { type: 'choice', instructions: '이 문의는 어떤 유형인가요?', criteria: unicode } },
        '배송이 3일째 안 와요. 그냥 환불해 주세요 😡',
      ),
      'request.unicode',
    );
    const roundTrip = Object.keys((kind?.kind as { probabilities?: object } | undefined)?.probabilities ?? {});
    if (JSON.stringify(roundTrip) !== JSON.stringify(Object.keys(unicode))) {
      violate('unicode', 'request.unicode', `option names came back as ${JSON.stringify(roundTrip)}`);
    }
    await expectAnswer(
      'unknown-fields',
      payload({ refund: NOUL }, TICKET, { x_trace_id: 'jevcompat', seed: 7 }),
      'request.unknown-fields',
    );

    // invalid: 4xx expected (SHOULD), in the validation shape; never 5xx.
    const base = payload({ refund: NOUL });
    const { state: _state, ...noState } = base;
    const { questions: _questions, ...noQuestions } = base;
    const invalid: Record<string, Payload | string> = {
      'not-json': '{"model": "jev-latest", "state": "x", "questions": {',
      'missing-state': noState,
      'missing-questions': noQuestions,
      'empty-questions': { ...base, questions: {} },
      'missing-type': { ...base, questions: { refund: { instructions: 'Refund?' } } },
      'type-boolean': { ...base, questions: { refund: { type: 'boolean', instructions: 'Refund?' } } },
      'choice-no-options': { ...base, questions: { team: { type: 'choice', instructions: 'Team?', criteria: {} } } },
    };
    for (const [label, body] of Object.entries(invalid)) await expectReject(`invalid:${label}`, body);
    await expectReject(
      'invalid:score-map',
      {
        ...base,
        questions: {
          anger: {
            type: 'score',
            instructions: 'How frustrated?',
            criteria: { 0: 'Calm', 1: 'Frustrated', 2: 'Very angry' },
          },
        },
      },
      'score.map-rejected',
    );

    // out of range: an answer or a 4xx, never a 5xx.
    const many = {
      Billing: null,
      ...Object.fromEntries(Array.from({ length: 255 }, (_, i) => [`Queue ${String(i + 1).padStart(3, '0')}`, null])),
    };
    const outOfRange: Record<string, Question> = {
      'choice-1': { type: 'choice', instructions: 'Team?', criteria: { Billing: null } },
      'choice-256': { type: 'choice', instructions: 'Queue?', criteria: many },
      'score-1': { type: 'score', instructions: 'Frustration?', criteria: ['Calm'] },
      'score-11': {
        type: 'score',
        instructions: 'Frustration?',
        criteria: Array.from({ length: 11 }, (_, i) => `Level ${i}`),
      },
      'score-null-level': { type: 'score', instructions: 'Frustration?', criteria: ['Calm', null] },
    };
    for (const [label, q] of Object.entries(outOfRange))
      await expectAnswerOr4xx(`out-of-range:${label}`, payload({ q }));
    await expectAnswerOr4xx('out-of-range:state-null', payload({ refund: NOUL }, null));

    // unknown model: an answer, or a 4xx with the error shape (422 in the validation shape).
    const unknown = await send({ ...base, model: 'jevcompat-no-such-model' });
    exercise('unknown-model', 'errors.no-5xx');
    if (unknown.status >= 500) violate('unknown-model', 'errors.no-5xx', `got ${unknown.status}`);
    else if (unknown.status === 422) {
      exercise('unknown-model', 'http.content-type', 'errors.json', 'errors.validation-shape');
      validateValidationError('unknown-model', unknown);
    } else if (unknown.status >= 400) {
      exercise('unknown-model', 'http.content-type', 'errors.json', 'errors.shape');
      validateErrorShape('unknown-model', unknown);
    }

    // auth: a missing key gets 401/403, a wrong one 401, both authentication_error.
    for (const [req, auth, allowed] of [
      ['auth.missing', false, [401, 403]],
      ['auth.invalid', 'jevcompat-wrong-key', [401]],
    ] as const) {
      const x = await send(base, auth);
      exercise('auth', req);
      if (!(allowed as readonly number[]).includes(x.status)) violate('auth', req, `got ${x.status}`);
      if (x.status >= 400) validateErrorShape('auth', x, req, 'authentication_error');
    }

    // semantics: the same request, renamed, batched or reordered, gets the same answers (exactly here).
    const semantic = { refund: NOUL, team: CHOICE, anger: SCORE };
    const baseline = await expectAnswer('semantics-baseline', payload(semantic));
    const compare = async (req: string, questions: { [id: string]: Question }, mapping: Record<string, string>) => {
      const variant = await expectAnswer(req, payload(questions));
      exercise(req, req);
      for (const [from, to] of Object.entries(mapping)) {
        if (JSON.stringify(variant?.[to]) !== JSON.stringify(baseline?.[from])) {
          violate(req, req, `${from}: ${JSON.stringify(baseline?.[from])} became ${JSON.stringify(variant?.[to])}`);
        }
      }
    };
    const renamed: Record<string, string> = { refund: 'zz-renamed.1', team: 'Q 🙂', anger: 'x_y_z' };
    await compare(
      'semantics.question-id',
      Object.fromEntries(Object.entries(semantic).map(([k, v]) => [renamed[k] ?? k, v])),
      renamed,
    );
    const identity = { refund: 'refund', team: 'team', anger: 'anger' };
    await compare(
      'semantics.batching',
      {
        ...semantic,
        urgent: { type: 'noul', instructions: 'Does the customer need an answer today?' },
        lang: {
          type: 'choice',
          instructions: 'What language is the ticket in?',
          criteria: { English: null, Other: null },
        },
        polite: { type: 'score', instructions: 'How polite is the message?', criteria: ['Rude', 'Neutral', 'Polite'] },
      },
      identity,
    );
    await compare('semantics.question-order', { anger: SCORE, team: CHOICE, refund: NOUL }, identity);
  });
  after(() => t?.close());

  for (const [id, level, title] of REQUIREMENTS) {
    if (id === NOT_APPLICABLE) continue;
    if (id === 'dropin.sdk-python') continue;
    test(`${level} ${id}: ${title}`, () => {
      assert.ok(exercised.has(id), `${id} was never exercised`);
      const broken = findings.filter((f) => f.req === id).map((f) => `${f.where}: ${f.message}`);
      assert.deepEqual(broken, []);
    });
  }

  test(`MUST ${NOT_APPLICABLE}: does not apply, as in jevcompat (every /v1 request needs a key)`, async () => {
    const x = await send(payload({ q: NOUL }), false);
    assert.equal(x.status, 403);
  });

  test('MUST dropin.sdk-python: the official SDK (here @typesafe-ai/sdk) parses every answer type', async () => {
    const client = new TypeSafeClient({
      apiKey: t.key,
      baseURL: 'http://127.0.0.1',
      retry: { maxRetries: 0 },
      fetch: (input, init) => Promise.resolve(t.app.request(input, init)),
    });
    const res = await client.systemOne({
      state: TICKET,
      questions: {
        refund: noul(NOUL.instructions),
        team: choice(CHOICE.instructions, CHOICE.criteria),
        anger: score(SCORE.instructions, ['Calm', 'Frustrated', 'Very angry']),
      },
    });
    assert.equal(typeof res.answers.refund.noul, 'number');
    assert.ok(Object.keys(CHOICE.criteria).includes(res.answers.team.choice));
    assert.equal(typeof res.answers.anger.score, 'number');
  });

  test('every requirement of the suite has its test here', () => {
    assert.equal(REQUIREMENTS.filter(([, level]) => level === 'MUST').length, 33);
    assert.equal(REQUIREMENTS.filter(([, level]) => level === 'SHOULD').length, 15);
    const untested = REQUIREMENTS.map(([id]) => id).filter(
      (id) => !exercised.has(id) && id !== NOT_APPLICABLE && id !== 'dropin.sdk-python',
    );
    assert.deepEqual(untested, []);
  });
});
