/**
 * The paraphrase suite (paraphrase-groups.json): hand-written groups of wordings of one meaning.
 * Runs each wording through System One serving (in process, any engine) and measures stability (the
 * largest within-group change of any probability) and, on plain groups, whether the answer says
 * what a careful reader would. `npm run bench:paraphrase` runs it on the shipped model, and
 * `npm run train` on the model it trains (the model card's paraphrase section).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ParaphraseReport } from '../engines/embedded/artifacts.ts';
import type { DecisionEngine } from '../engines/engine.ts';
import { createEngineHost } from '../engines/host.ts';
import type { SystemOneRequest, WireAnswer } from '../systemone/protocol.ts';
import { createSystemOne } from '../systemone/serve.ts';

export interface Wording {
  state: string;
  instructions: string;
}

export interface Group {
  id: string;
  /** The state plainly carries what the options name (topic, intent, polarity, spam). */
  plain: boolean;
  question:
    | { type: 'noul' }
    | { type: 'choice'; criteria: Record<string, string | null> }
    | { type: 'score'; criteria: string[] };
  /** The right answer: a choice label, a score level index, or "true"/"false". */
  expected: string;
  wordings: Wording[];
}

export const GROUPS_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'paraphrase-groups.json');

export function readGroups(file = GROUPS_FILE): Group[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { groups: Group[] }).groups;
}

/** The request of one wording of a group. */
export function requestOf(group: Group, wording: Wording): SystemOneRequest {
  return { state: wording.state, questions: { q: { ...group.question, instructions: wording.instructions } } };
}

/** An answer as one distribution over option keys ("false"/"true" for noul, labels, level indices). */
export function distribution(answer: WireAnswer): Record<string, number> {
  if (answer.type === 'noul') return { false: 1 - answer.noul, true: answer.noul };
  return answer.probabilities;
}

export interface GroupResult {
  id: string;
  type: string;
  plain: boolean;
  /** Largest max-min, over the group's wordings, of any option's probability. */
  change: number;
  /** Wordings whose most likely option is the expected one (ties and abstentions count as wrong). */
  correct: number;
  wordings: number;
  /** Mean probability given to the expected option. */
  expectedProbability: number;
  /** Wordings whose answer says it abstained (Brier's `x_abstained` extension). */
  abstained: number;
}

export function scoreGroup(group: Group, answers: WireAnswer[]): GroupResult {
  const dists = answers.map(distribution);
  const keys = Object.keys(dists[0] ?? {});
  let change = 0;
  for (const k of keys) {
    const ps = dists.map((d) => d[k] ?? 0);
    change = Math.max(change, Math.max(...ps) - Math.min(...ps));
  }
  let correct = 0;
  let expectedProbability = 0;
  let abstained = 0;
  for (const [i, d] of dists.entries()) {
    const entries = Object.entries(d);
    const top = Math.max(...entries.map(([, p]) => p));
    const winners = entries.filter(([, p]) => p === top).map(([k]) => k);
    // An answer that says it abstained is no judgement, whichever option the rounding to hundredths
    // (which sums to 1, so a uniform answer is not an exact tie) happens to put first.
    if (winners.length === 1 && winners[0] === group.expected && !answers[i]?.x_abstained) correct++;
    expectedProbability += (d[group.expected] ?? 0) / dists.length;
    if (answers[i]?.x_abstained) abstained++;
  }
  return {
    id: group.id,
    type: group.question.type,
    plain: group.plain,
    change: Math.round(change * 100) / 100,
    correct,
    wordings: dists.length,
    expectedProbability: Math.round(expectedProbability * 1000) / 1000,
    abstained,
  };
}

export function summarize(results: GroupResult[]): ParaphraseReport {
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  const byType: ParaphraseReport['byType'] = {};
  const plain: ParaphraseReport['plain'] = {};
  for (const type of ['noul', 'choice', 'score']) {
    const of = results.filter((r) => r.type === type);
    byType[type] = {
      groups: of.length,
      meanChange: r3(mean(of.map((r) => r.change))),
      maxChange: r3(Math.max(0, ...of.map((r) => r.change))),
    };
    const p = of.filter((r) => r.plain);
    const wordings = p.reduce((a, r) => a + r.wordings, 0);
    plain[type] = {
      wordings,
      accuracy: r3(wordings === 0 ? 0 : p.reduce((a, r) => a + r.correct, 0) / wordings),
      expectedProbability: r3(
        wordings === 0 ? 0 : p.reduce((a, r) => a + r.expectedProbability * r.wordings, 0) / wordings,
      ),
      abstained: p.reduce((a, r) => a + r.abstained, 0),
    };
  }
  return {
    groups: results.length,
    meanChange: r3(mean(results.map((r) => r.change))),
    maxChange: r3(Math.max(0, ...results.map((r) => r.change))),
    maxGroup: results.reduce<GroupResult | null>((a, r) => (a === null || r.change > a.change ? r : a), null)?.id ?? '',
    byType,
    plain,
  };
}

/** Every group's wordings answered by `engine` through System One serving, scored and summarized. */
export async function runSuite(engine: DecisionEngine): Promise<{
  results: GroupResult[];
  answers: Record<string, WireAnswer[]>;
  summary: ParaphraseReport;
}> {
  const systemOne = createSystemOne(createEngineHost(engine, { queueLimit: 64, timeoutMs: 60_000 }));
  const results: GroupResult[] = [];
  const answers: Record<string, WireAnswer[]> = {};
  for (const group of readGroups()) {
    const got: WireAnswer[] = [];
    for (const wording of group.wordings) {
      const { response } = await systemOne.serve(requestOf(group, wording));
      const answer = response.answers.q;
      if (!answer) throw new Error(`no answer for ${group.id}`);
      got.push(answer);
    }
    answers[group.id] = got;
    results.push(scoreGroup(group, got));
  }
  return { results, answers, summary: summarize(results) };
}
