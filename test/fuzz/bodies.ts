/**
 * Seeded generators of malformed and adversarial requests for every public route: bad JSON, wrong
 * types, huge strings, deep nesting, unicode edge cases, prototype keys, duplicate keys, odd
 * content types, extreme question and option counts. Same seed, same requests.
 */
import { mulberry32 } from '../../src/lib/seeded.ts';

export interface FuzzRequest {
  /** What the request is, for reports: route and the mutations applied. */
  label: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  /** Which credential to send. */
  auth: 'key' | 'session' | 'none';
  headers: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
  /** Question ids of a request that, if answered with 200, must all be in the answers. */
  questionIds?: string[];
  /** The body repeats a key in one object (a question id, `state`): it must never be answered. */
  duplicateKeys?: boolean;
}

export type Rng = () => number;

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));

/** Strings that have broken parsers, tokenizers and renderers elsewhere. */
const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\ud800',
  '\udfff\ud800',
  '\ufeff{"a":1}',
  '\u202eevil\u202c',
  '👩‍👩‍👧‍👦'.repeat(50),
  `a${'\u0301'.repeat(2000)}`,
  'ﷺ'.repeat(2000),
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '\r\n\r\nHTTP/1.1 200 OK\r\n',
  '<script>alert(1)</script>',
  '../../../../etc/passwd',
  '%00%2e%2e',
  '$' + '{jndi:ldap://x}',
  'null',
  '{"nested":"json in a string"}',
  'extra_token_id_1 '.repeat(100),
  '\t'.repeat(5000),
  'x'.repeat(70_000),
  '日本語のテキスト'.repeat(1000),
];

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__'];

function nasty(rng: Rng): string {
  return pick(rng, NASTY_STRINGS);
}

function deep(levels: number, leaf = '"x"'): string {
  return `${'['.repeat(levels)}${leaf}${']'.repeat(levels)}`;
}

/** A JSON value of a random shape, as text (text so that nesting past JSON.stringify's stack is possible). */
function anyJsonText(rng: Rng): string {
  switch (int(rng, 0, 11)) {
    case 0:
      return 'null';
    case 1:
      return pick(rng, ['0', '-0', '1e308', '-1e-308', '123456789012345678901234567890', '0.1']);
    case 2:
      return pick(rng, ['true', 'false']);
    case 3:
      return JSON.stringify(nasty(rng));
    case 4:
      return deep(pick(rng, [10, 63, 64, 65, 200, 5000]));
    case 5:
      return pick(rng, ['{}', '[]', '[[]]', '{"":""}']);
    case 6:
      return JSON.stringify(Object.fromEntries(PROTO_KEYS.map((k) => [k, nasty(rng).slice(0, 20)])));
    case 7:
      return `{"${pick(rng, PROTO_KEYS)}":{"polluted":true}}`;
    case 8:
      return JSON.stringify(Array.from({ length: int(rng, 0, 3000) }, (_, i) => i));
    case 9:
      return `{"a":1,"a":${deep(3)},"a":"dup"}`;
    case 10:
      return JSON.stringify({ user: { name: nasty(rng).slice(0, 200), turns: [nasty(rng).slice(0, 200)] } });
    default:
      return JSON.stringify('s'.repeat(int(rng, 0, 50)));
  }
}

/** One question as text; `small` keeps it to a few hundred bytes (for requests with many questions). */
function questionText(rng: Rng, small: boolean): string {
  if (small)
    return pick(rng, [
      '{"type":"noul"}',
      '{"type":"choice","criteria":{"a":null,"b":"x"}}',
      '{"type":"score","criteria":["lo","hi"]}',
      '{"type":"nope"}',
      '{}',
      'null',
    ]);
  const instructions = rng() < 0.7 ? `"instructions":${rng() < 0.5 ? '"Is it?"' : anyJsonText(rng)},` : '';
  switch (int(rng, 0, 6)) {
    case 0:
      return `{${instructions}"type":"noul"}`;
    case 1: {
      const k = pick(rng, [0, 1, 2, 3, 255, 256, 1000]);
      const labels = Array.from({ length: k }, (_, i) =>
        rng() < 0.1 ? pick(rng, PROTO_KEYS) : rng() < 0.1 ? nasty(rng).slice(0, 300) : `o${i}`,
      );
      // Rich descriptions on a few options only: the body stays within a few megabytes.
      const described = (i: number) => (i < 5 && rng() < 0.5 ? anyJsonText(rng) : rng() < 0.5 ? 'null' : '"d"');
      const criteria = labels.map((l, i) => `${JSON.stringify(l)}:${described(i)}`).join(',');
      return `{${instructions}"type":"choice","criteria":{${criteria}}}`;
    }
    case 2: {
      const n = pick(rng, [0, 1, 2, 5, 10, 11, 100]);
      const levels = Array.from({ length: n }, (_, i) => (i < 10 && rng() < 0.2 ? anyJsonText(rng) : '"level"')).join(
        ',',
      );
      return `{${instructions}"type":"score","criteria":[${levels}]}`;
    }
    case 3:
      return `{${instructions}"type":${JSON.stringify(pick(rng, ['rank', '', 'NOUL', 'choice ', nasty(rng).slice(0, 100)]))}}`;
    case 4:
      return `{${instructions}"criteria":{"a":null,"b":null}}`;
    case 5:
      return anyJsonText(rng);
    default:
      return `{${instructions}"type":"noul","criteria":${rng() < 0.5 ? '{"true":"yes","false":null}' : anyJsonText(rng)}}`;
  }
}

function questionId(rng: Rng, i: number): string {
  const r = rng();
  if (r < 0.08) return pick(rng, PROTO_KEYS);
  if (r < 0.14) return nasty(rng).slice(0, int(rng, 0, 400));
  if (r < 0.18) return 'i'.repeat(pick(rng, [128, 129, 5000]));
  return `q${i}`;
}

/** A well-formed System One body whose texts are the nasty ones: what reaches the engine. */
function validBody(rng: Rng): { text: string; ids: string[] } {
  const short = () => nasty(rng).slice(0, int(rng, 0, 300));
  const state =
    rng() < 0.6
      ? nasty(rng)
      : { doc: { title: short(), parts: Array.from({ length: int(rng, 0, 20) }, short), [short() || 'k']: short() } };
  const questions: Record<string, unknown> = {};
  for (let i = 0; i < int(rng, 1, 6); i++) {
    const id = rng() < 0.3 ? pick(rng, PROTO_KEYS.slice(1)) : `${short().slice(0, 100)}${i}`;
    const kind = int(rng, 0, 2);
    const instructions = rng() < 0.8 ? short() : { ask: short() };
    if (kind === 0) questions[id] = { type: 'noul', instructions, criteria: { true: short(), false: null } };
    else if (kind === 1) {
      const labels = Array.from({ length: pick(rng, [2, 3, 7, 255]) }, (_, j) => `${short().slice(0, 100)}${j}`);
      questions[id] = {
        type: 'choice',
        instructions,
        criteria: Object.fromEntries(labels.map((l) => [l, rng() < 0.5 ? null : short()])),
      };
    } else {
      questions[id] = {
        type: 'score',
        instructions,
        criteria: Array.from({ length: int(rng, 2, 10) }, () => short() || 'level'),
      };
    }
  }
  return { text: JSON.stringify({ state, questions }), ids: Object.keys(questions) };
}

/** A System One body, as text, with the ids it asks about (and whether it repeats a key it was built with). */
function systemOneBody(rng: Rng): { text: string; ids: string[]; duplicateKeys?: boolean } {
  if (rng() < 0.3) return validBody(rng);
  const count = pick(rng, [0, 1, 1, 2, 3, 10, 256, 257, 600]);
  const ids = Array.from({ length: count }, (_, i) => questionId(rng, i));
  const questions = ids.map((id) => `${JSON.stringify(id)}:${questionText(rng, count > 10)}`).join(',');
  const fields: string[] = [];
  if (rng() < 0.9) fields.push(`"state":${rng() < 0.5 ? JSON.stringify(nasty(rng)) : anyJsonText(rng)}`);
  if (rng() < 0.95) fields.push(`"questions":${rng() < 0.9 ? `{${questions}}` : anyJsonText(rng)}`);
  if (rng() < 0.3) fields.push(`"model":${rng() < 0.5 ? '"brier-latest"' : anyJsonText(rng)}`);
  if (rng() < 0.1) fields.push(`"extra":${anyJsonText(rng)}`);
  const twice = fields.some((f) => f.startsWith('"state":')) && rng() < 0.05;
  if (twice) fields.push(`"state":"duplicate"`);
  const unique = [...new Set(ids)];
  const questionsSent = fields.some((f) => f.startsWith(`"questions":{`));
  return {
    text: `{${fields.join(',')}}`,
    ids: unique,
    duplicateKeys: twice || (questionsSent && unique.length < ids.length),
  };
}

function authBody(rng: Rng): string {
  const fields = ['email', 'password', 'name', 'newPassword', 'token', 'callbackURL', 'provider', 'rememberMe'];
  const out: string[] = [];
  for (const f of fields) {
    if (rng() < 0.5) continue;
    const value =
      f === 'email' && rng() < 0.5
        ? JSON.stringify(pick(rng, ['a@b.co', 'not-an-email', `${'e'.repeat(300)}@x.co`, 'A@B.CO ', '@', 'a@b']))
        : f.includes('assword') && rng() < 0.5
          ? JSON.stringify(pick(rng, ['correct-horse-battery', 'short', 'p'.repeat(129), 'aaaaaaaaaaaa']))
          : rng() < 0.5
            ? JSON.stringify(nasty(rng))
            : anyJsonText(rng);
    out.push(`${JSON.stringify(f)}:${value}`);
  }
  if (rng() < 0.1) out.push(`"__proto__":{"emailVerified":true}`);
  return `{${out.join(',')}}`;
}

/** Text-level damage: truncation, garbage, literals JSON does not have, invalid UTF-8. */
function damage(rng: Rng, text: string): string | Uint8Array<ArrayBuffer> {
  switch (int(rng, 0, 9)) {
    case 0:
      return text.slice(0, int(rng, 0, text.length));
    case 1: {
      const at = int(rng, 0, text.length);
      return `${text.slice(0, at)}${pick(rng, ['}', ']', ',', '"', '\\', 'NaN', 'Infinity', '\u0000'])}${text.slice(at)}`;
    }
    case 2:
      return `${text},`;
    case 3:
      return new Uint8Array(
        Buffer.concat([Buffer.from(text.slice(0, 10)), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(text.slice(10))]),
      );
    case 4:
      return '';
    case 5:
      return deep(int(rng, 1000, 100_000));
    case 6:
      return pick(rng, ['null', '0', '"string"', '[]', 'true']);
    default:
      return text;
  }
}

const CONTENT_TYPES = [
  ...Array<string>(24).fill('application/json'),
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/problem+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  '',
  'application/jsonx',
];

const AUTH_PATHS = [
  '/control/v1/auth/sign-up/email',
  '/control/v1/auth/sign-in/email',
  '/control/v1/auth/request-password-reset',
  '/control/v1/auth/reset-password',
  '/control/v1/auth/send-verification-email',
  '/control/v1/auth/sign-in/social',
  '/control/v1/auth/sign-out',
];

/** A labelled example row (mostly well-formed, nasty texts), as a line of JSON Lines. */
function exampleLine(rng: Rng): string {
  if (rng() < 0.15) return rng() < 0.5 ? anyJsonText(rng) : nasty(rng);
  const { text, ids } = validBody(rng);
  const row = JSON.parse(text) as Record<string, unknown>;
  const labels = Object.fromEntries(
    ids.map((id) => [id, pick(rng, [true, false, 'o1', '0', 1, nasty(rng).slice(0, 50), null])]),
  );
  if (rng() < 0.1) row.id = nasty(rng).slice(0, 400);
  return JSON.stringify({ ...row, labels });
}

const TEACH_TYPES = ['application/jsonl', 'application/x-ndjson', 'application/json', 'text/csv', 'text/plain', ''];

/** Writes to the teach-your-task routes: uploads, retention, outcomes, training jobs. */
function teachWrite(
  rng: Rng,
  mutate: (text: string) => string | Uint8Array<ArrayBuffer>,
  headers: Record<string, string>,
): FuzzRequest {
  const auth = pick(rng, ['session', 'session', 'key', 'none'] as const);
  switch (int(rng, 0, 6)) {
    case 4: {
      // Unlabelled states (issue 34): example lines (an unknown field each) or bare states.
      const lines = Array.from({ length: pick(rng, [0, 1, 3, 30]) }, () =>
        rng() < 0.5 ? exampleLine(rng) : `{"state":${anyJsonText(rng)}}`,
      );
      const type = pick(rng, TEACH_TYPES);
      return {
        label: 'POST /control/v1/states',
        method: 'POST',
        path: '/control/v1/states',
        auth,
        headers: type ? { 'content-type': type } : {},
        body: mutate(lines.join('\n')),
      };
    }
    case 5: {
      const questions = rng() < 0.5 ? '{"q":{"type":"noul","instructions":"refund?"}}' : anyJsonText(rng);
      const body = `{"teacher":${JSON.stringify(nasty(rng).slice(0, 100))},"questions":${questions},"budget":${anyJsonText(rng)},"dry_run":${pick(rng, ['true', 'false', '1', anyJsonText(rng)])}}`;
      return {
        label: 'POST /control/v1/distillation-jobs',
        method: 'POST',
        path: '/control/v1/distillation-jobs',
        auth,
        headers,
        body: mutate(body),
      };
    }
    case 6: {
      const id = encodeURIComponent(
        pick(rng, ['ft:brier-lite-3.7.0:000000000000', nasty(rng).slice(0, 200)]).replace(/\p{Cs}/gu, '\uFFFD'),
      );
      return {
        label: 'PUT /control/v1/adapters/:id/fallback',
        method: 'PUT',
        path: `/control/v1/adapters/${id}/fallback`,
        auth,
        headers,
        body: mutate(`{"threshold":${anyJsonText(rng)},"teacher":${JSON.stringify(nasty(rng).slice(0, 80))}}`),
      };
    }
    case 0: {
      const lines = Array.from({ length: pick(rng, [0, 1, 3, 30, 300]) }, () => exampleLine(rng));
      const type = pick(rng, TEACH_TYPES);
      const body = mutate(lines.join(pick(rng, ['\n', '\r\n', '\n\n'])));
      return {
        label: 'POST /control/v1/examples',
        method: 'POST',
        path: '/control/v1/examples',
        auth,
        headers: type ? { 'content-type': type } : {},
        body,
      };
    }
    case 1: {
      const days = pick(rng, ['0', '1', '30', '90', '91', '-1', '1.5', '"7"', 'null', anyJsonText(rng)]);
      const key = rng() < 0.3 ? `,"key_id":${JSON.stringify(nasty(rng).slice(0, 150))}` : '';
      return {
        label: 'PUT /control/v1/retention',
        method: 'PUT',
        path: '/control/v1/retention',
        auth,
        headers,
        body: mutate(`{"days":${days}${key}}`),
      };
    }
    case 2: {
      const id = pick(rng, ['req_00000000000000000000000000000000', nasty(rng).slice(0, 200), 'x'.repeat(500)]);
      const body = `{"request_id":${JSON.stringify(id)},"question_id":${JSON.stringify(nasty(rng).slice(0, 200))},"label":${anyJsonText(rng)}}`;
      return {
        label: 'POST /control/v1/outcomes',
        method: 'POST',
        path: '/control/v1/outcomes',
        auth,
        headers,
        body: mutate(body),
      };
    }
    default: {
      const body = rng() < 0.5 ? `{"templates":${anyJsonText(rng)}}` : anyJsonText(rng);
      return {
        label: 'POST /control/v1/training-jobs',
        method: 'POST',
        path: '/control/v1/training-jobs',
        auth,
        headers,
        body: mutate(body),
      };
    }
  }
}

/** Reads and deletions on the teach-your-task routes, with odd ids and query strings. */
function teachRead(rng: Rng): FuzzRequest {
  const id = encodeURIComponent(
    pick(rng, [
      'ft:brier-lite-3.7.0:000000000000',
      'job_nope',
      nasty(rng).slice(0, 300),
      '..',
      'x'.repeat(3000),
    ]).replace(/\p{Cs}/gu, '\uFFFD'),
  );
  const days = encodeURIComponent(
    pick(rng, ['1', '90', '0', '367', 'x', nasty(rng).slice(0, 100)]).replace(/\p{Cs}/gu, '\uFFFD'),
  );
  const [method, path] = pick(rng, [
    ['GET', '/control/v1/examples'],
    ['DELETE', `/control/v1/examples/${id}`],
    ['GET', '/control/v1/retention'],
    ['GET', '/control/v1/training-jobs'],
    ['GET', `/control/v1/training-jobs/${id}`],
    ['GET', '/control/v1/adapters'],
    ['GET', `/control/v1/adapters/${id}`],
    ['DELETE', `/control/v1/adapters/${id}`],
    ['GET', `/control/v1/calibration?days=${days}`],
    ['GET', '/control/v1/teachers'],
    ['GET', '/control/v1/states'],
    ['DELETE', '/control/v1/states'],
  ] as const);
  return {
    label: `${method} ${path.split('?')[0]?.replace(/\/[^/]*$/, '/:id') ?? path}`,
    method,
    path,
    auth: pick(rng, ['session', 'key', 'none']),
    headers: {},
  };
}

/** `count` requests spread over every public route, from `seed`. */
export function* fuzzRequests(seed: number, count: number): Generator<FuzzRequest> {
  const rng = mulberry32(seed);
  for (let n = 0; n < count; n++) {
    const route = int(rng, 0, 11);
    const contentType = pick(rng, CONTENT_TYPES);
    const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
    const mutate = (text: string) => (rng() < 0.25 ? damage(rng, text) : text);
    if (route <= 3 && rng() < 0.03) {
      // Past the byte limit: a clean 413, the connection still usable.
      const size = pick(rng, [1_048_577, 1_100_000, 3_000_000, 20_000_000]);
      const body = `{"state":"${'x'.repeat(size)}","questions":{"q":{"type":"noul"}}}`;
      yield { label: 'POST /v1/systemone (huge)', method: 'POST', path: '/v1/systemone', auth: 'key', headers, body };
    } else if (route <= 3) {
      const { text, ids, duplicateKeys } = systemOneBody(rng);
      const body = mutate(text);
      // Damaged text can still parse, as another request (a `}` inserted ends the questions early).
      const intact = body === text;
      yield {
        label: 'POST /v1/systemone',
        method: 'POST',
        path: '/v1/systemone',
        auth: 'key',
        headers,
        body,
        questionIds: intact ? ids : undefined,
        duplicateKeys: intact && duplicateKeys,
      };
    } else if (route === 4) {
      const { text, ids, duplicateKeys } = systemOneBody(rng);
      const path = '/control/v1/playground/systemone';
      const body = mutate(text);
      const intact = body === text;
      const questionIds = intact ? ids : undefined;
      yield {
        label: `POST ${path}`,
        method: 'POST',
        path,
        auth: 'session',
        headers,
        body,
        questionIds,
        duplicateKeys: intact && duplicateKeys,
      };
    } else if (route <= 6) {
      const path = pick(rng, AUTH_PATHS);
      // Never with the session: signing out would end the session the other routes use.
      const auth = rng() < 0.2 && !path.endsWith('/sign-out') ? 'session' : 'none';
      yield { label: `POST ${path}`, method: 'POST', path, auth, headers, body: mutate(authBody(rng)) };
    } else if (route === 7) {
      const name = rng() < 0.5 ? JSON.stringify(nasty(rng)) : anyJsonText(rng);
      const body = mutate(rng() < 0.8 ? `{"name":${name}}` : anyJsonText(rng));
      yield {
        label: 'POST /control/v1/keys',
        method: 'POST',
        path: '/control/v1/keys',
        auth: pick(rng, ['session', 'none', 'key']),
        headers,
        body,
      };
    } else if (route === 8) {
      const id = encodeURIComponent(
        pick(rng, ['key_nope', nasty(rng).slice(0, 300), '..', 'x'.repeat(5000), '%2e%2e']).toWellFormed(),
      );
      yield {
        label: 'DELETE /control/v1/keys/:id',
        method: 'DELETE',
        path: `/control/v1/keys/${id}`,
        auth: pick(rng, ['session', 'none']),
        headers: {},
      };
    } else if (route === 10) {
      yield teachWrite(rng, mutate, headers);
    } else if (route === 11) {
      yield teachRead(rng);
    } else {
      const days = encodeURIComponent(
        pick(rng, ['1', '0', '-1', '30', '366', '1e9', 'NaN', '', 'x'.repeat(3000), nasty(rng)]).toWellFormed(),
      );
      const path = pick(rng, [
        `/control/v1/usage?days=${days}`,
        `/control/v1/usage?days=1&days=2`,
        '/v1/models',
        '/control/v1/account',
        '/control/v1/model',
        '/healthz',
        `/v1/${days}`,
      ]);
      yield {
        label: `GET ${path.split('?')[0]}`,
        method: 'GET',
        path,
        auth: pick(rng, ['session', 'key', 'none']),
        headers: {},
      };
    }
  }
}
