/**
 * Labelled examples in System One form: one JSON object per line, a `state`, its `questions` as
 * POST /v1/systemone takes them, and the true `labels` per question id. Parsed and validated row by
 * row, every problem named by its line and field; bounded before anything is parsed. No HTTP here.
 */
import { z } from '@hono/zod-openapi';
import { type FieldIssue, fail } from '../lib/errors.ts';
import { boundedEcho, checkJsonText, clip, describePath, describeProblem } from '../lib/json-bounds.ts';
import { toDecisionRequest } from './normalize.ts';
import {
  MAX_JSON_DEPTH,
  Question,
  QuestionId,
  SystemOneRequest,
  type WireQuestion,
  type WireState,
} from './protocol.ts';
import { type Template, templateOf } from './templates.ts';

/** Limits of one upload (the per-account limits are in src/domain/examples.ts). */
export const UPLOAD_LIMITS = {
  /** Bytes of one upload body (its own route limit, above the control plane's 16 KiB). */
  maxBytes: 8 * 1024 * 1024,
  /** Non-empty lines (rows) in one upload. */
  maxRows: 5000,
  /** Characters of one line. */
  maxLineChars: 65_536,
  /** Characters of a row's state as the model reads it (JSON states rendered compact). */
  maxStateChars: 16_384,
  /** Questions in one row. */
  maxQuestions: 16,
  /** Characters of a row's own `id` (optional, for the uploader's reference). */
  maxIdChars: 128,
  /** Problems listed in a refusal (the message says how many more there were). */
  maxIssues: 100,
} as const;

/** A label as a row may give it: noul true/false, choice a label, score a level index (or the level's text). */
const Label = z.union([z.boolean(), z.string().max(1000), z.number()], {
  error: 'a label is true/false (noul), a label (choice) or a level index (score)',
});

export const LabelledRow = z
  .object({
    id: z.string().max(UPLOAD_LIMITS.maxIdChars, `at most ${UPLOAD_LIMITS.maxIdChars} characters`).optional(),
    state: SystemOneRequest.shape.state,
    questions: z
      .record(QuestionId, Question)
      .refine((q) => Object.keys(q).length >= 1, 'at least one question is required')
      .refine(
        (q) => Object.keys(q).length <= UPLOAD_LIMITS.maxQuestions,
        `at most ${UPLOAD_LIMITS.maxQuestions} questions per row (the limit)`,
      ),
    labels: z.record(z.string(), Label),
  })
  .strict()
  .openapi('LabelledExample', {
    description:
      'One line of an upload: a state, its questions in System One form, and the true label of each question (noul: true or false; choice: one of its labels; score: a level index, 0 = the lowest, or the level text).',
    example: {
      state: 'I was charged twice for my subscription.',
      questions: {
        team: { type: 'choice', instructions: 'Which team handles this?', criteria: { billing: null, tech: null } },
      },
      labels: { team: 'billing' },
    },
  });

/** One labelled question of a valid row. */
export interface LabelledQuestion {
  questionId: string;
  question: WireQuestion;
  template: Template;
  /** The label in the template's canonical form (see Template.labels). */
  label: string;
}

export interface ParsedRow {
  /** 1-based line number in the upload. */
  line: number;
  /** The state as sent (a string, or a JSON object or array), as compact JSON. */
  state: string;
  questions: LabelledQuestion[];
}

/**
 * The canonical label of `value` for question `q`, or an error sentence. noul takes the JSON booleans
 * true and false only (the strings "true", "yes", the number 1 are refused alike), choice one of its
 * labels, score a level index or a level's text.
 */
export function canonicalLabel(q: WireQuestion, value: unknown): { label: string } | { error: string } {
  switch (q.type) {
    case 'noul': {
      if (value === true) return { label: 'true' };
      if (value === false) return { label: 'false' };
      const what = typeof value === 'string' ? ' (a string)' : typeof value === 'number' ? ' (a number)' : '';
      return {
        error: `must be true or false, a JSON boolean (a noul question), got ${JSON.stringify(boundedEcho(value, 40))}${what}`,
      };
    }
    case 'choice': {
      const labels = Object.keys(q.criteria);
      if (typeof value === 'string' && Object.hasOwn(q.criteria, value)) return { label: value };
      const shown = labels.slice(0, 8).map((l) => JSON.stringify(clip(l, 40)));
      if (labels.length > 8) shown.push(`and ${labels.length - 8} more`);
      return {
        error: `must be one of the question's labels (${shown.join(', ')}), got ${JSON.stringify(boundedEcho(value, 40))}`,
      };
    }
    case 'score': {
      const n = q.criteria.length;
      if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < n)
        return { label: String(value) };
      if (typeof value === 'string') {
        const at = q.criteria.indexOf(value);
        if (at >= 0) return { label: String(at) };
      }
      return {
        error: `must be a level index from 0 to ${n - 1} (or a level's text), got ${JSON.stringify(boundedEcho(value, 40))}`,
      };
    }
  }
}

export function issue(
  line: number,
  path: (string | number)[],
  msg: string,
  input: unknown,
  type = 'value_error',
): FieldIssue {
  return { type, loc: ['body', line, ...path], msg: `line ${line}: ${describePath(path)}: ${msg}`, input };
}

/** A line's schema problems as field issues: the path into the line, the value found there (bounded). */
export function schemaIssues(line: number, value: unknown, error: z.ZodError): FieldIssue[] {
  return error.issues.map((i) => {
    const path = i.path.map((p) => (typeof p === 'number' ? p : clip(String(p), 140)));
    let at: unknown = value;
    for (const p of i.path) at = at && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[p] : undefined;
    const missing = at === undefined && i.code === 'invalid_type';
    // A record key that fails its own schema (a question id too long): its own message names the limit.
    const inner = i.code === 'invalid_key' ? i.issues[0] : undefined;
    return issue(
      line,
      path,
      missing ? 'Field required' : (inner?.message ?? i.message),
      boundedEcho(inner ? (i.path.at(-1) ?? null) : (at ?? null)),
      missing ? 'missing' : (inner?.code ?? i.code),
    );
  });
}

/** The issue of a line whose state is past the upload's bound, or null. */
export function stateTooLong(line: number, state: WireState): FieldIssue | null {
  const text = toDecisionRequest(state, []).state.text;
  if (text.length <= UPLOAD_LIMITS.maxStateChars) return null;
  return issue(
    line,
    ['state'],
    `is ${text.length} characters, the limit is ${UPLOAD_LIMITS.maxStateChars}`,
    boundedEcho(state),
    'too_long',
  );
}

/** Validates one parsed line; returns its labelled questions or its problems. */
function checkRow(line: number, value: unknown): { row?: ParsedRow; issues: FieldIssue[] } {
  const parsed = LabelledRow.safeParse(value);
  if (!parsed.success) return { issues: schemaIssues(line, value, parsed.error) };
  const row = parsed.data;
  const issues: FieldIssue[] = [];
  const tooLong = stateTooLong(line, row.state);
  if (tooLong) issues.push(tooLong);
  const questions: LabelledQuestion[] = [];
  for (const [questionId, question] of Object.entries(row.questions)) {
    if (!Object.hasOwn(row.labels, questionId)) {
      issues.push(issue(line, ['labels', questionId], `missing: every question needs its true label`, null, 'missing'));
      continue;
    }
    const label = canonicalLabel(question, row.labels[questionId]);
    if ('error' in label) {
      issues.push(issue(line, ['labels', questionId], label.error, boundedEcho(row.labels[questionId] ?? null)));
      continue;
    }
    questions.push({ questionId, question, template: templateOf(question), label: label.label });
  }
  for (const id of Object.keys(row.labels)) {
    if (!Object.hasOwn(row.questions, id)) {
      issues.push(issue(line, ['labels', id], 'labels a question this row does not have', boundedEcho(id)));
    }
  }
  if (issues.length > 0) return { issues };
  return { row: { line, state: JSON.stringify(row.state), questions }, issues };
}

/**
 * Parses an upload of labelled rows (JSON Lines; blank lines are skipped but counted, so that line
 * numbers match the file). All or nothing: any invalid row refuses the whole upload with a
 * VALIDATION error listing problems by line and field (`loc`: body, line, field...).
 */
export function parseLabelledJsonl(text: string): ParsedRow[] {
  return parseJsonLines(text, checkRow);
}

/**
 * A JSON Lines upload parsed and bounded line by line (UPLOAD_LIMITS), each line checked by `check`;
 * all or nothing, problems named by line and field. Labelled examples and unlabelled states share it.
 */
export function parseJsonLines<T>(
  text: string,
  check: (line: number, value: unknown) => { row?: T; issues: FieldIssue[] },
): T[] {
  const lines = text.split('\n');
  const rows: T[] = [];
  const issues: FieldIssue[] = [];
  let invalid = 0;
  let count = 0;
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] ?? '').replace(/\r$/, '');
    if (raw.trim() === '') continue;
    count++;
    const line = i + 1;
    if (count > UPLOAD_LIMITS.maxRows) {
      throw fail(
        'BAD_REQUEST',
        `line ${line}: an upload has at most ${UPLOAD_LIMITS.maxRows} rows (the limit); split the file`,
      );
    }
    if (raw.length > UPLOAD_LIMITS.maxLineChars) {
      invalid++;
      issues.push(
        issue(line, [], `is ${raw.length} characters, the limit is ${UPLOAD_LIMITS.maxLineChars}`, null, 'too_long'),
      );
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      invalid++;
      issues.push(
        issue(line, [], `not valid JSON: ${clip((error as Error).message, 120)}`, clip(raw, 200), 'json_invalid'),
      );
      continue;
    }
    const bounds = checkJsonText(raw, MAX_JSON_DEPTH);
    if (bounds) {
      invalid++;
      const { type, msg } = describeProblem(bounds, MAX_JSON_DEPTH);
      issues.push(issue(line, bounds.path, msg, null, type));
      continue;
    }
    const checked = check(line, value);
    if (checked.row) rows.push(checked.row);
    else {
      invalid++;
      issues.push(...checked.issues);
    }
  }
  if (issues.length > 0) {
    const shown = issues.slice(0, 5).map((i) => i.msg);
    if (issues.length > 5) shown.push(`and ${issues.length - 5} more problems`);
    throw fail('VALIDATION', `${invalid} of ${count} rows are invalid; nothing was stored: ${shown.join('; ')}`, {
      issues: issues.slice(0, UPLOAD_LIMITS.maxIssues),
    });
  }
  if (count === 0) throw fail('BAD_REQUEST', 'body: the upload has no rows (one JSON object per line)');
  return rows;
}
