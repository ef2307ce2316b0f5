/** The playground's editable state, its request body, its shareable URL form, and code snippets. */

export type QuestionType = 'noul' | 'choice' | 'score';

export interface QuestionDraft {
  id: string;
  type: QuestionType;
  instructions: string;
  trueText: string;
  falseText: string;
  options: { label: string; description: string }[];
  levels: string[];
}

export interface PlaygroundState {
  /** The model to ask: '' for the server's default, or an id (an adapter of the account: ft:...). */
  model: string;
  state: string;
  /** The state is JSON (object or array) rather than text. */
  stateIsJson: boolean;
  questions: QuestionDraft[];
}

export interface RequestBody {
  model?: string;
  state: unknown;
  questions: Record<string, Record<string, unknown>>;
}

export function newQuestion(type: QuestionType, id: string): QuestionDraft {
  return {
    id,
    type,
    instructions: '',
    trueText: '',
    falseText: '',
    options: [
      { label: '', description: '' },
      { label: '', description: '' },
    ],
    levels: ['', '', ''],
  };
}

export const EXAMPLE: PlaygroundState = {
  model: '',
  state: 'I was charged twice for my subscription this month. Please refund one of the charges.',
  stateIsJson: false,
  questions: [
    { ...newQuestion('noul', 'refund'), instructions: 'Is the customer asking for money back?' },
    {
      ...newQuestion('choice', 'team'),
      instructions: 'Which team should handle this?',
      options: [
        { label: 'billing', description: 'charges and refunds' },
        { label: 'tech', description: 'bugs and outages' },
        { label: 'other', description: '' },
      ],
    },
    { ...newQuestion('score', 'urgency'), instructions: 'How urgent is this?', levels: ['low', 'medium', 'high'] },
  ],
};

/** Errors keyed by a field path such as "state", "q.0.id", "q.1.options". */
export type DraftErrors = Record<string, string>;

export function validate(s: PlaygroundState): DraftErrors {
  const errors: DraftErrors = {};
  if (s.state.trim() === '') errors.state = 'Enter the state: the text or JSON the questions are about.';
  else if (s.stateIsJson) {
    try {
      const v: unknown = JSON.parse(s.state);
      if (v === null || typeof v !== 'object') errors.state = 'JSON state must be an object or an array.';
    } catch (e) {
      errors.state = `Not valid JSON: ${(e as Error).message}`;
    }
  }
  if (s.questions.length === 0) errors.questions = 'Add at least one question.';
  const seen = new Set<string>();
  s.questions.forEach((q, i) => {
    const id = q.id.trim();
    if (!id) errors[`q.${i}.id`] = 'Give the question an id (it keys the answer).';
    else if (seen.has(id)) errors[`q.${i}.id`] = `Another question already has the id “${id}”.`;
    seen.add(id);
    if (q.type === 'choice') {
      const labels = q.options.map((o) => o.label.trim()).filter(Boolean);
      if (labels.length < 2) errors[`q.${i}.options`] = 'A choice needs at least 2 labelled options.';
      else if (new Set(labels).size !== labels.length) errors[`q.${i}.options`] = 'Option labels must differ.';
    }
    if (q.type === 'score') {
      const levels = q.levels.map((l) => l.trim()).filter(Boolean);
      if (levels.length < 2 || levels.length > 10) errors[`q.${i}.levels`] = 'A score needs 2 to 10 levels.';
    }
  });
  return errors;
}

export function toBody(s: PlaygroundState): RequestBody {
  let state: unknown = s.state;
  if (s.stateIsJson) {
    try {
      state = JSON.parse(s.state);
    } catch {
      state = s.state;
    }
  }
  const questions: RequestBody['questions'] = {};
  for (const q of s.questions) {
    const out: Record<string, unknown> = { type: q.type };
    if (q.instructions.trim()) out.instructions = q.instructions.trim();
    if (q.type === 'noul' && (q.trueText.trim() || q.falseText.trim())) {
      out.criteria = {
        ...(q.trueText.trim() ? { true: q.trueText.trim() } : {}),
        ...(q.falseText.trim() ? { false: q.falseText.trim() } : {}),
      };
    }
    if (q.type === 'choice') {
      out.criteria = Object.fromEntries(
        q.options.filter((o) => o.label.trim()).map((o) => [o.label.trim(), o.description.trim() || null]),
      );
    }
    if (q.type === 'score') out.criteria = q.levels.map((l) => l.trim()).filter(Boolean);
    questions[q.id.trim()] = out;
  }
  const model = s.model.trim();
  return model ? { model, state, questions } : { state, questions };
}

const text = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));

/** Reads a pasted request body back into the form; throws with a message naming what is wrong. */
export function fromBody(value: unknown): PlaygroundState {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('the body must be a JSON object');
  const body = value as { model?: unknown; state?: unknown; questions?: unknown };
  if (body.state === undefined) throw new Error('"state" is missing');
  if (body.model !== undefined && typeof body.model !== 'string')
    throw new Error('"model" must be a model id (a string)');
  if (!body.questions || typeof body.questions !== 'object' || Array.isArray(body.questions)) {
    throw new Error('"questions" must be an object of questions keyed by id');
  }
  const questions: QuestionDraft[] = [];
  for (const [id, raw] of Object.entries(body.questions as Record<string, unknown>)) {
    const q = (raw ?? {}) as { type?: unknown; instructions?: unknown; criteria?: unknown };
    if (q.type !== 'noul' && q.type !== 'choice' && q.type !== 'score') {
      throw new Error(`question "${id}": type must be noul, choice or score`);
    }
    const d = newQuestion(q.type, id);
    d.instructions = text(q.instructions);
    if (q.type === 'noul' && q.criteria && typeof q.criteria === 'object') {
      const c = q.criteria as { true?: unknown; false?: unknown };
      d.trueText = text(c.true);
      d.falseText = text(c.false);
    }
    if (q.type === 'choice' && q.criteria && typeof q.criteria === 'object' && !Array.isArray(q.criteria)) {
      d.options = Object.entries(q.criteria as Record<string, unknown>).map(([label, desc]) => ({
        label,
        description: text(desc),
      }));
    }
    if (q.type === 'score' && Array.isArray(q.criteria)) d.levels = q.criteria.map(text);
    questions.push(d);
  }
  const isJson = typeof body.state !== 'string';
  return {
    model: typeof body.model === 'string' ? body.model : '',
    state: isJson ? JSON.stringify(body.state, null, 2) : (body.state as string),
    stateIsJson: isJson,
    questions,
  };
}

function toBase64Url(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(s: string): string {
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

/** The playground in a URL fragment: never sent to the server, shareable as a link. */
export function shareHash(s: PlaygroundState): string {
  return `#q=${toBase64Url(JSON.stringify(toBody(s)))}`;
}

export function fromHash(hash: string): PlaygroundState | null {
  const m = /^#q=([A-Za-z0-9_-]+)$/.exec(hash);
  if (!m?.[1]) return null;
  try {
    return fromBody(JSON.parse(fromBase64Url(m[1])));
  } catch {
    return null;
  }
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function snippets(origin: string, body: RequestBody): { curl: string; typescript: string; python: string } {
  const json = JSON.stringify(body, null, 2);
  const curl = [
    `curl -s ${origin}/v1/systemone \\`,
    `  -H "Authorization: Bearer $BRIER_KEY" \\`,
    `  -H 'content-type: application/json' \\`,
    `  -d ${shellQuote(JSON.stringify(body))}`,
  ].join('\n');
  const indent = (s: string, n: number) => s.replace(/\n/g, `\n${' '.repeat(n)}`);
  const typescript = `import { TypeSafeClient } from '@typesafe-ai/sdk';

const client = new TypeSafeClient({ apiKey: process.env.BRIER_KEY, baseURL: '${origin}' });
const { answers, usage } = await client.systemOne(${indent(json, 0)});
console.log(answers, usage);
`;
  const python = `import json, os, urllib.request

body = json.loads(r'''${json}''')
req = urllib.request.Request(
    "${origin}/v1/systemone",
    data=json.dumps(body).encode(),
    headers={"Authorization": f"Bearer {os.environ['BRIER_KEY']}", "content-type": "application/json"},
)
with urllib.request.urlopen(req) as res:
    print(json.load(res))
`;
  return { curl, typescript, python };
}

/** One option of an answer as the playground shows it: its label and its probability as the wire gives it. */
export interface OptionBar {
  label: string;
  p: number;
}

/**
 * What an answer prefers, read from the probabilities the playground shows (the wire's 2 decimals):
 * the top option is `chosen` only when its probability is above every other's. When the top probability
 * equals the runner-up's (a uniform answer, or two options level at 2 decimals) the answer is `tied`:
 * it has no preference, even though the API's `choice` field still names one option.
 */
export type Preference =
  | { kind: 'chosen'; label: string }
  | { kind: 'tied'; labels: string[]; p: number }
  | { kind: 'abstained' };

/**
 * `abstained`: the answer says it carries no information (Brier's `abstained` extension): no option is
 * preferred, whatever the rounded numbers show.
 */
export function preference(options: readonly OptionBar[], abstained = false): Preference {
  if (abstained) return { kind: 'abstained' };
  const top = Math.max(...options.map((o) => o.p));
  const best = options.filter((o) => o.p === top);
  const first = best[0];
  if (best.length === 1 && first) return { kind: 'chosen', label: first.label };
  return { kind: 'tied', labels: best.map((o) => o.label), p: best.length > 0 ? top : 0 };
}

/** "billing and tech are tied at 0.39"; past four options, only their count. */
export function describeTie(labels: readonly string[], p: number): string {
  const at = `tied at ${p.toFixed(2)}`;
  if (labels.length > 4) return `${labels.length} options are ${at}`;
  const names = labels.length > 1 ? `${labels.slice(0, -1).join(', ')} and ${labels.at(-1)}` : (labels[0] ?? '');
  return `${names} are ${at}`;
}

/** Who answered a question of a request that named an adapter, as its `x_answered_by` says. */
export type AnsweredBy =
  | { kind: 'adapter'; id: string }
  | { kind: 'base'; id: string }
  | { kind: 'teacher'; id: string };

/** The prefix of `x_answered_by` for a teacher's answer (src/systemone/serve.ts, teacherModel). */
const TEACHER_PREFIX = 'teacher:';

/**
 * Reads an answer's `x_answered_by` (absent when the request named no adapter): the adapter itself
 * (the response's `model`), one of its teachers (the adapter was less sure than its fallback
 * threshold), or the base model (no template of the adapter matched the question).
 */
export function answeredBy(xAnsweredBy: string | undefined, responseModel: string): AnsweredBy | null {
  if (xAnsweredBy === undefined) return null;
  if (xAnsweredBy.startsWith(TEACHER_PREFIX)) return { kind: 'teacher', id: xAnsweredBy.slice(TEACHER_PREFIX.length) };
  return xAnsweredBy === responseModel ? { kind: 'adapter', id: xAnsweredBy } : { kind: 'base', id: xAnsweredBy };
}

/** What the playground says under an answer about who gave it. */
export function describeAnsweredBy(by: AnsweredBy): string {
  switch (by.kind) {
    case 'adapter':
      return `Answered by the adapter ${by.id}.`;
    case 'teacher':
      return `Answered by teacher ${by.id}: the adapter was less sure than its fallback threshold.`;
    case 'base':
      return `Answered by the base model ${by.id}: no template of the adapter matches this question.`;
  }
}
