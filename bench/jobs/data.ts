/**
 * The training job of issue 33's report, rebuilt from ../shared/data: 1,651 labelled questions over
 * 29 question templates.
 *
 * - Five public sets of ../shared/data/decisions, 78 rows each (every 25th row from the first, so the
 *   labels keep their natural frequencies): sst2 and tweeteval_hate (yes/no), ag_news and trec
 *   (choice), airline_sentiment (score); one template each.
 * - A multi-question workflow set: the CalDec validation requests (../shared/data/caldec), each with
 *   the questions of its decision site, labelled with the most probable option of its target (the
 *   first on a tie); the 24 templates with the most questions kept (1,261 labelled questions of 615
 *   requests), the others dropped.
 *
 * 390 + 1,261 = 1,651 labelled questions on 1,001 distinct states. Rows are in upload form (state,
 * questions, labels), in file order.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED_DATA } from '../../src/training/data.ts';

export const PUBLIC_SETS = ['sst2', 'tweeteval_hate', 'ag_news', 'trec', 'airline_sentiment'] as const;
export const ROWS_PER_SET = 78;
export const WORKFLOW_TEMPLATES = 24;

export interface UploadRow {
  state: unknown;
  questions: Record<string, unknown>;
  labels: Record<string, unknown>;
}

/** Stable text of a question (keys sorted), to count templates the way the bench picks them. */
function keyOf(q: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sort(q));
}

function lines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean);
}

/** The wire label of a target distribution's most probable option (the first on a tie). */
function topLabel(question: { type: string }, probabilities: Record<string, number>): unknown {
  let best = '';
  let p = Number.NEGATIVE_INFINITY;
  for (const [label, v] of Object.entries(probabilities)) {
    if (v > p) {
      best = label;
      p = v;
    }
  }
  if (question.type === 'noul') return best === 'true';
  if (question.type === 'score') return Number(best);
  return best;
}

/** The job's rows, or undefined when ../shared/data is absent. */
export function jobRows(): UploadRow[] | undefined {
  const caldec = join(SHARED_DATA, 'caldec', 'validation.jsonl');
  if (!existsSync(caldec)) return undefined;
  const rows: UploadRow[] = [];
  for (const set of PUBLIC_SETS) {
    const all = lines(join(SHARED_DATA, 'decisions', `${set}.jsonl`));
    for (let i = 0; i < ROWS_PER_SET; i++) {
      const r = JSON.parse(all[i * 25] ?? '{}') as { state: unknown; question: unknown; label: unknown };
      rows.push({ state: r.state, questions: { q: r.question }, labels: { q: r.label } });
    }
  }
  const cases = lines(caldec).map((l) => {
    const c = JSON.parse(l) as { state: string; questions: string; gold: string };
    let state: unknown = c.state;
    try {
      state = JSON.parse(c.state);
    } catch {
      // a plain-text state
    }
    return {
      state,
      questions: JSON.parse(c.questions) as Record<string, { type: string }>,
      gold: JSON.parse(c.gold) as Record<string, { probabilities: Record<string, number> }>,
    };
  });
  const counts = new Map<string, number>();
  for (const c of cases)
    for (const q of Object.values(c.questions)) counts.set(keyOf(q), (counts.get(keyOf(q)) ?? 0) + 1);
  const kept = new Set(
    [...counts.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, WORKFLOW_TEMPLATES)
      .map(([k]) => k),
  );
  for (const c of cases) {
    const questions: Record<string, unknown> = {};
    const labels: Record<string, unknown> = {};
    for (const [id, q] of Object.entries(c.questions)) {
      const gold = c.gold[id];
      if (!kept.has(keyOf(q)) || !gold) continue;
      questions[id] = q;
      labels[id] = topLabel(q, gold.probabilities);
    }
    if (Object.keys(labels).length > 0) rows.push({ state: c.state, questions, labels });
  }
  return rows;
}

/** Labelled questions, distinct states and templates of `rows` (templates by their question text). */
export function describe(rows: UploadRow[]) {
  const templates = new Set<string>();
  let labelled = 0;
  for (const r of rows)
    for (const q of Object.values(r.questions)) {
      templates.add(keyOf(q));
      labelled++;
    }
  return { labelled, states: new Set(rows.map((r) => JSON.stringify(r.state))).size, templates: templates.size };
}
