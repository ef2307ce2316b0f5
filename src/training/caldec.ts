/** The CalDec validation split as engine requests with soft targets (out-of-distribution check). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DecisionRequest, Json } from '../engines/request.ts';
import { questionFromRaw, SHARED_DATA } from './data.ts';

export interface CaldecCase {
  id: string;
  site: string;
  request: DecisionRequest;
  /** Soft target per question, over that question's options. */
  targets: number[][];
}

export function caldecPath(): string {
  return join(SHARED_DATA, 'caldec', 'validation.jsonl');
}

export function loadCaldec(): CaldecCase[] {
  if (!existsSync(caldecPath())) return [];
  const out: CaldecCase[] = [];
  for (const line of readFileSync(caldecPath(), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as { case_id: string; site: string; state: string; questions: string; gold: string };
    let stateJson: Json | undefined;
    try {
      stateJson = JSON.parse(row.state) as Json;
    } catch {
      stateJson = undefined;
    }
    const text = typeof stateJson === 'string' || stateJson === undefined ? row.state : JSON.stringify(stateJson);
    const qs = JSON.parse(row.questions) as Record<
      string,
      { type: 'noul' | 'choice' | 'score'; instructions?: string; criteria?: Record<string, string | null> | string[] }
    >;
    const gold = JSON.parse(row.gold) as Record<string, { probabilities: Record<string, number> }>;
    const questions = [];
    const targets: number[][] = [];
    for (const [key, q] of Object.entries(qs)) {
      const question = questionFromRaw({
        type: q.type,
        instructions: q.instructions ?? null,
        criteria: q.criteria ?? null,
      });
      const probs = gold[key]?.probabilities ?? {};
      const t = question.options.map((o) => probs[o.label] ?? 0);
      const sum = t.reduce((a, b) => a + b, 0);
      if (sum <= 0) continue;
      questions.push(question);
      targets.push(t.map((x) => x / sum));
    }
    if (questions.length === 0) continue;
    out.push({
      id: row.case_id,
      site: row.site,
      request: { state: { text, json: typeof stateJson === 'string' ? undefined : stateJson }, questions },
      targets,
    });
  }
  return out;
}
