/** Loads the labelled decision sets from ../shared/data as engine-facing requests. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DecisionOption, DecisionQuestion, DecisionRequest, Json } from '../engines/request.ts';
import { hash32, mulberry32 } from '../lib/seeded.ts';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SHARED_DATA = resolve(REPO_ROOT, '..', 'shared', 'data');
export const SEED = 3;

export interface Example {
  id: string;
  task: string;
  request: DecisionRequest;
  /** Index of the labelled option. */
  target: number;
  /** 'train' | 'test' for head-training tasks (20% test by id hash); 'eval' for others. */
  split: 'train' | 'test' | 'eval';
  /** The question as written in the data file. */
  raw: RawQuestion;
}

export interface RawQuestion {
  type: 'noul' | 'choice' | 'score';
  instructions: string | null;
  criteria: null | Record<string, string | null> | string[];
}

export function questionFromRaw(q: RawQuestion): DecisionQuestion {
  let options: DecisionOption[];
  if (q.type === 'noul') {
    const c = q.criteria && !Array.isArray(q.criteria) ? q.criteria : {};
    options = [
      { label: 'false', description: c.false ?? null },
      { label: 'true', description: c.true ?? null },
    ];
  } else if (q.type === 'choice') {
    const c = q.criteria && !Array.isArray(q.criteria) ? q.criteria : {};
    options = Object.entries(c).map(([label, description]) => ({ label, description: description ?? null }));
  } else {
    const levels = Array.isArray(q.criteria) ? q.criteria : [];
    options = levels.map((text, i) => ({ label: String(i), description: text }));
  }
  return { type: q.type, instructions: q.instructions, options };
}

export function targetIndex(question: DecisionQuestion, label: Json): number {
  if (question.type === 'noul') return label === true ? 1 : 0;
  if (question.type === 'score') return Number(label);
  return question.options.findIndex((o) => o.label === label);
}

export function decisionsDir(): string {
  return join(SHARED_DATA, 'decisions');
}

export function listTasks(): string[] {
  const dir = decisionsDir();
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => f.replace(/\.jsonl$/, ''))
    .sort();
}

/** Whether an id falls in the 20% of rows held out of head training. */
export function isTestRow(id: string): boolean {
  return hash32(id) % 5 === 0;
}

/**
 * Rows of one task: a seeded uniform sample of at most `limit` rows (natural priors kept).
 * `headTasks` decides which split names apply.
 */
export function loadTask(task: string, limit: number, headTasks: ReadonlySet<string>): Example[] {
  const lines = readFileSync(join(decisionsDir(), `${task}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean);
  const rand = mulberry32(SEED ^ hash32(task));
  const order = lines.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const t = order[i] ?? 0;
    order[i] = order[j] ?? 0;
    order[j] = t;
  }
  const chosen = order.slice(0, limit).sort((a, b) => a - b);
  const out: Example[] = [];
  for (const index of chosen) {
    const raw = JSON.parse(lines[index] ?? '{}') as { id: string; state: string; question: RawQuestion; label: Json };
    const question = questionFromRaw(raw.question);
    const target = targetIndex(question, raw.label);
    if (target < 0 || target >= question.options.length) continue;
    out.push({
      id: raw.id,
      task,
      request: { state: { text: raw.state, json: undefined }, questions: [question] },
      target,
      split: headTasks.has(task) ? (isTestRow(raw.id) ? 'test' : 'train') : 'eval',
      raw: raw.question,
    });
  }
  return out;
}

export { hash32, mulberry32 };
