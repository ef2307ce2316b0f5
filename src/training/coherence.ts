/**
 * The coherence suite (issue 31; `npm run bench:coherence`, and `npm run train` on the model it trains):
 * cases generated from the labelled sets' states and labels, one group per law that related answers
 * must keep, answered through System One serving in process. A case counts where its answers are
 * informative (not abstained): a law kept only because every answer is uniform is no result, so the
 * violation rate is over informative cases, beside the informative rate.
 *
 * Laws (tolerance 0.05 on the wire's hundredths):
 * - negation: "Is this X?" and "Is this not X?" asked apart sum to 1.
 * - antonyms: "Is it positive?" and "Is it negative?" asked apart sum to at most 1 (contraries: a
 *   neutral text is neither).
 * - option as yes/no: "Is it about X?" beside a choice over X and its alternatives, in one request,
 *   is P(X); and the yes/no questions over every option sum to 1.
 * - the same, asked in separate requests (reported; agreement across requests is not by construction).
 * - at least: "Is it at least level k?" beside a score question is its cumulative P(level >= k), and
 *   falls as k rises.
 * - reorder, renamed labels, renamed question ids: a choice's answers per option do not move.
 */
import type { CoherenceSummary } from '../engines/embedded/artifacts.ts';
import { readableLabel } from '../engines/embedded/texts.ts';
import type { DecisionEngine } from '../engines/engine.ts';
import { createEngineHost } from '../engines/host.ts';
import type { SystemOneRequest, WireAnswer } from '../systemone/protocol.ts';
import { createSystemOne } from '../systemone/serve.ts';
import { HEAD_TASKS, rowsPerTask } from './config.ts';
import { type Example, hash32, listTasks, loadTask } from './data.ts';
import { generateItems, labelPhrase, POLARITY_SOURCES, TOPIC_SOURCES } from './templates.ts';

export const TOLERANCE = 0.05;
/** Cases per law (at most), drawn by id hash from the sets' rows. */
export const CASES_PER_LAW = 60;

/** Per law: cases, informative cases, violations among them and their rate (null: none informative). */
export type CoherenceReport = CoherenceSummary;
type LawResult = CoherenceSummary['laws'][number];

type Serve = (request: SystemOneRequest) => Promise<Record<string, WireAnswer>>;

function yes(a: WireAnswer | undefined): number {
  return a?.type === 'noul' ? a.noul : Number.NaN;
}

function probs(a: WireAnswer | undefined): Record<string, number> {
  return a && a.type !== 'noul' ? a.probabilities : {};
}

function criteriaOf(ex: Example): Record<string, string | null> {
  const q = ex.request.questions[0];
  return Object.fromEntries((q?.options ?? []).map((o) => [o.label, o.description]));
}

/** Items drawn by id hash (deterministic), at most `n`. */
function draw<T>(items: readonly T[], n: number, salt: string, id: (t: T) => string): T[] {
  return [...items].sort((a, b) => hash32(`${salt}${id(a)}`) - hash32(`${salt}${id(b)}`)).slice(0, n);
}

const rowId = (ex: Example): string => ex.id;

/** A choice of at most 6 options including the row's label (large label sets are cut). */
function smallChoice(ex: Example): { criteria: Record<string, string | null>; target: string } {
  const all = Object.entries(criteriaOf(ex));
  const q = ex.request.questions[0];
  const target = q?.options[ex.target]?.label ?? '';
  const others = all
    .filter(([l]) => l !== target)
    .sort((a, b) => hash32(`${ex.id}${a[0]}`) - hash32(`${ex.id}${b[0]}`));
  const kept = [...others.slice(0, 5), ...all.filter(([l]) => l === target)].sort(
    (a, b) => all.findIndex(([l]) => l === a[0]) - all.findIndex(([l]) => l === b[0]),
  );
  return { criteria: Object.fromEntries(kept), target };
}

export async function runCoherence(engine: DecisionEngine): Promise<CoherenceReport> {
  const systemOne = createSystemOne(createEngineHost(engine, { queueLimit: 64, timeoutMs: 60_000 }));
  let answers = 0;
  let informativeAnswers = 0;
  const serve: Serve = async (request) => {
    const { response } = await systemOne.serve(request);
    for (const a of Object.values(response.answers)) {
      answers++;
      if (!a.x_abstained) informativeAnswers++;
    }
    return response.answers;
  };
  const rowsOf = new Map(listTasks().map((t) => [t, loadTask(t, rowsPerTask(t), HEAD_TASKS)]));
  const laws: LawResult[] = [];
  const record = (law: string, byConstruction: boolean, outcomes: { informative: boolean; violated: boolean }[]) => {
    const inf = outcomes.filter((o) => o.informative);
    const violations = inf.filter((o) => o.violated).length;
    laws.push({
      law,
      byConstruction,
      cases: outcomes.length,
      informative: inf.length,
      violations,
      rate: inf.length > 0 ? Math.round((violations / inf.length) * 1000) / 1000 : null,
    });
  };

  // negation and antonyms, from the generated yes/no questions (topic and polarity)
  const generated = [...rowsOf].flatMap(([t, rows]) => generateItems(t, rows));
  const negPairs = draw(
    generated.filter((g) => g.negated),
    CASES_PER_LAW,
    'neg',
    (g) => g.example.id,
  );
  const negation: { informative: boolean; violated: boolean }[] = [];
  for (const g of negPairs) {
    const plain = generated.find((p) => p.pair === g.pair && !p.negated);
    if (!plain) continue;
    const ask = (ex: Example) =>
      serve({
        state: ex.request.state.text,
        questions: { q: { type: 'noul', instructions: ex.request.questions[0]?.instructions ?? '' } },
      });
    const [a, b] = [(await ask(plain.example)).q, (await ask(g.example)).q];
    negation.push({
      informative: !a?.x_abstained || !b?.x_abstained,
      violated: Math.abs(yes(b) - (1 - yes(a))) > TOLERANCE,
    });
  }
  record('negation (asked apart)', true, negation);

  const antonyms: { informative: boolean; violated: boolean }[] = [];
  for (const task of Object.keys(POLARITY_SOURCES)) {
    const noun = POLARITY_SOURCES[task]?.noun ?? 'text';
    for (const ex of draw(rowsOf.get(task) ?? [], CASES_PER_LAW / 4, 'ant', rowId)) {
      const state = ex.request.state.text;
      const pos = (
        await serve({ state, questions: { q: { type: 'noul', instructions: `Is this ${noun} positive?` } } })
      ).q;
      const neg = (
        await serve({ state, questions: { q: { type: 'noul', instructions: `Is this ${noun} negative?` } } })
      ).q;
      antonyms.push({
        informative: !pos?.x_abstained || !neg?.x_abstained,
        violated: yes(pos) + yes(neg) > 1 + TOLERANCE,
      });
    }
  }
  record('antonyms sum to at most 1 (asked apart)', false, antonyms);

  // options asked as yes/no, in the choice's request and apart
  const together: { informative: boolean; violated: boolean }[] = [];
  const sums: { informative: boolean; violated: boolean }[] = [];
  const apart: { informative: boolean; violated: boolean }[] = [];
  const reorder: { informative: boolean; violated: boolean }[] = [];
  const relabel: { informative: boolean; violated: boolean }[] = [];
  const reid: { informative: boolean; violated: boolean }[] = [];
  const perSet = Math.ceil(CASES_PER_LAW / TOPIC_SOURCES.length);
  for (const task of TOPIC_SOURCES) {
    for (const ex of draw(rowsOf.get(task) ?? [], perSet, 'opt', rowId)) {
      const state = ex.request.state.text;
      const instructions = ex.request.questions[0]?.instructions ?? '';
      const { criteria } = smallChoice(ex);
      const labels = Object.keys(criteria);
      const asYesNo = (l: string) => `Is this about ${labelPhrase(l, criteria[l] ?? null)}?`;
      const nouls = Object.fromEntries(
        labels.map((l, i) => [`o${i}`, { type: 'noul' as const, instructions: asYesNo(l) }]),
      );
      const got = await serve({ state, questions: { c: { type: 'choice', instructions, criteria }, ...nouls } });
      const p = probs(got.c);
      const informative = !got.c?.x_abstained;
      const ys = labels.map((_, i) => yes(got[`o${i}`]));
      together.push({ informative, violated: labels.some((l, i) => Math.abs((ys[i] ?? 0) - (p[l] ?? 0)) > TOLERANCE) });
      sums.push({ informative, violated: Math.abs(ys.reduce((a, b) => a + b, 0) - 1) > TOLERANCE });
      const alone: number[] = [];
      for (const l of labels)
        alone.push(yes((await serve({ state, questions: { q: { type: 'noul', instructions: asYesNo(l) } } })).q));
      apart.push({
        informative: informative || alone.some((v) => Math.abs(v - 0.5) > 0.005),
        violated: labels.some((l, i) => Math.abs((alone[i] ?? 0) - (p[l] ?? 0)) > TOLERANCE),
      });
      const reversed = Object.fromEntries([...labels].reverse().map((l) => [l, criteria[l] ?? null]));
      const r = probs(
        (await serve({ state, questions: { c: { type: 'choice', instructions, criteria: reversed } } })).c,
      );
      reorder.push({ informative, violated: labels.some((l) => Math.abs((r[l] ?? 0) - (p[l] ?? 0)) > TOLERANCE) });
      const renamed = Object.fromEntries(labels.map((l) => [readableLabel(l).toLowerCase(), criteria[l] ?? null]));
      const n = probs(
        (await serve({ state, questions: { c: { type: 'choice', instructions, criteria: renamed } } })).c,
      );
      relabel.push({
        informative,
        violated: labels.some((l) => Math.abs((n[readableLabel(l).toLowerCase()] ?? 0) - (p[l] ?? 0)) > TOLERANCE),
      });
      const i = probs(
        (await serve({ state, questions: { some_other_id: { type: 'choice', instructions, criteria } } }))
          .some_other_id,
      );
      reid.push({ informative, violated: labels.some((l) => Math.abs((i[l] ?? 0) - (p[l] ?? 0)) > TOLERANCE) });
    }
  }
  record('option as yes/no = P(option) (one request)', true, together);
  record('yes/no over every option sums to 1 (one request)', true, sums);
  record('option as yes/no = P(option) (asked apart)', false, apart);
  record('options reordered', true, reorder);
  record('labels renamed (snake_case to words)', false, relabel);
  record('question ids renamed', true, reid);

  // "at least level k" beside the score, one request
  const cumulative: { informative: boolean; violated: boolean }[] = [];
  const monotone: { informative: boolean; violated: boolean }[] = [];
  const scoreSets = [...rowsOf.keys()].filter((t) => rowsOf.get(t)?.[0]?.request.questions[0]?.type === 'score');
  for (const task of scoreSets) {
    for (const ex of draw(rowsOf.get(task) ?? [], Math.ceil(CASES_PER_LAW / scoreSets.length), 'cum', rowId)) {
      const q = ex.request.questions[0];
      if (!q) continue;
      const levels = q.options.map((o) => o.description ?? '');
      const nouls = Object.fromEntries(
        levels.slice(1).map((l, i) => [`k${i + 1}`, { type: 'noul' as const, instructions: `Is it at least ${l}?` }]),
      );
      const got = await serve({
        state: ex.request.state.text,
        questions: { s: { type: 'score', instructions: q.instructions ?? '', criteria: levels }, ...nouls },
      });
      const p = probs(got.s);
      const informative = !got.s?.x_abstained;
      const at = levels.map((_, k) => yes(got[`k${k}`]));
      let violated = false;
      let falls = false;
      for (let k = 1; k < levels.length; k++) {
        let tail = 0;
        for (let l = k; l < levels.length; l++) tail += p[String(l)] ?? 0;
        if (Math.abs((at[k] ?? 0) - tail) > TOLERANCE) violated = true;
        if (k > 1 && (at[k] ?? 0) > (at[k - 1] ?? 0) + TOLERANCE) falls = true;
      }
      cumulative.push({ informative, violated });
      monotone.push({ informative, violated: falls });
    }
  }
  record('"at least level k" = cumulative (one request)', true, cumulative);
  record('"at least level k" falls as k rises', true, monotone);

  return {
    model: engine.info.id,
    laws,
    informativeRate: answers > 0 ? Math.round((informativeAnswers / answers) * 1000) / 1000 : 0,
    answers,
  };
}
