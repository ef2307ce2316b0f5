/**
 * The calibration numbers of the embedded model, generated from models/brier-lite/report.json (metrics)
 * and models/brier-lite/MODEL_CARD.md (model id, reliability bins, limitations), both written by
 * `npm run train`. Writes docs/_generated/calibration.md, included by docs/guide/probabilities.md.
 * No number on the page is typed by hand. `node docs/scripts/model-card.ts`
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MetricsBlock, ReportFile } from '../../src/engines/embedded/artifacts.ts';
import type { ReliabilityBin } from '../../src/lib/scoring.ts';
import { code, generatedNote, html, inline, table } from './markdown.ts';
import { DOCS_DIR, writeFiles } from './openapi.ts';

export const MODEL_DIR = path.resolve(DOCS_DIR, '..', 'models', 'brier-lite');
const TYPES = ['noul', 'choice', 'score'] as const;

/** What a metrics table shows of one evaluation: CalDec's have no prior and no chance floor. */
type Block = Pick<MetricsBlock, 'model' | 'uniform'> & Partial<Pick<MetricsBlock, 'prior' | 'eceFloor'>>;

type ByType = Record<string, Block | undefined>;

/** report.json (its one type is src/engines/embedded/artifacts.ts `ReportFile`). */
export type Report = ReportFile;

export interface Diagram {
  title: string;
  bins: ReliabilityBin[];
}

const f = (x: number | null | undefined, digits = 3): string =>
  x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits);

/** The reliability tables of the model card (`## Reliability diagrams`, one `###` block each). */
export function parseCardDiagrams(card: string): Diagram[] {
  const start = card.indexOf('## Reliability diagrams');
  if (start < 0) return [];
  const end = card.indexOf('\n## ', start + 3);
  const section = card.slice(start, end < 0 ? undefined : end);
  const diagrams: Diagram[] = [];
  let current: Diagram | undefined;
  for (const line of section.split('\n')) {
    const heading = /^### (.+)$/.exec(line);
    if (heading) {
      current = { title: heading[1] ?? '', bins: [] };
      diagrams.push(current);
      continue;
    }
    const row = /^(\d\.\d+)-(\d\.\d+)\s+(\d+)\s+(\d\.\d+)\s+(\d\.\d+)/.exec(line);
    if (row && current) {
      current.bins.push({
        lo: Number(row[1]),
        hi: Number(row[2]),
        n: Number(row[3]),
        confidence: Number(row[4]),
        accuracy: Number(row[5]),
      });
    }
  }
  return diagrams.filter((d) => d.bins.length > 0);
}

/** A reliability diagram as inline SVG: per bin, observed accuracy as a bar and mean predicted top probability as a dot. */
export function reliabilitySvg(d: Diagram): string {
  const W = 440;
  const H = 340;
  const m = { left: 48, right: 16, top: 16, bottom: 44 };
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  const x = (v: number) => (m.left + v * pw).toFixed(1);
  const y = (v: number) => (m.top + (1 - v) * ph).toFixed(1);
  const maxN = Math.max(1, ...d.bins.map((b) => b.n));
  const parts: string[] = [
    `<svg class="reliability" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${html(`Reliability diagram: ${d.title}`)}" xmlns="http://www.w3.org/2000/svg">`,
    `<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" class="rd-frame"/>`,
  ];
  for (const t of [0, 0.2, 0.4, 0.6, 0.8, 1]) {
    parts.push(
      `<line x1="${x(t)}" y1="${y(0)}" x2="${x(t)}" y2="${y(1)}" class="rd-grid"/>`,
      `<line x1="${x(0)}" y1="${y(t)}" x2="${x(1)}" y2="${y(t)}" class="rd-grid"/>`,
      `<text x="${x(t)}" y="${(m.top + ph + 16).toFixed(1)}" text-anchor="middle" class="rd-tick">${t.toFixed(1)}</text>`,
      `<text x="${(m.left - 6).toFixed(1)}" y="${(Number(y(t)) + 4).toFixed(1)}" text-anchor="end" class="rd-tick">${t.toFixed(1)}</text>`,
    );
  }
  for (const b of d.bins) {
    if (b.n === 0) continue;
    const label = `${b.lo.toFixed(2)}–${b.hi.toFixed(2)}: n=${b.n}, mean predicted ${b.confidence.toFixed(3)}, observed accuracy ${b.accuracy.toFixed(3)}`;
    const opacity = (0.35 + 0.65 * Math.sqrt(b.n / maxN)).toFixed(2);
    parts.push(
      `<rect x="${(Number(x(b.lo)) + 1).toFixed(1)}" y="${y(b.accuracy)}" width="${(Number(x(b.hi)) - Number(x(b.lo)) - 2).toFixed(1)}" height="${(Number(y(0)) - Number(y(b.accuracy))).toFixed(1)}" class="rd-bar" fill-opacity="${opacity}"><title>${html(label)}</title></rect>`,
      `<circle cx="${x(b.confidence)}" cy="${y(b.accuracy)}" r="${(2.5 + 4 * Math.sqrt(b.n / maxN)).toFixed(1)}" class="rd-dot"><title>${html(label)}</title></circle>`,
    );
  }
  parts.push(
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(1)}" y2="${y(1)}" class="rd-diagonal"/>`,
    `<text x="${(m.left + pw / 2).toFixed(1)}" y="${(H - 8).toFixed(1)}" text-anchor="middle" class="rd-label">top probability (15 equal-width bins)</text>`,
    `<text x="14" y="${(m.top + ph / 2).toFixed(1)}" text-anchor="middle" class="rd-label" transform="rotate(-90 14 ${(m.top + ph / 2).toFixed(1)})">observed accuracy</text>`,
    '</svg>',
  );
  return parts.join('');
}

function metricsTable(blocks: ByType, withPrior: boolean): string {
  const header = withPrior
    ? [
        'type',
        'n',
        'accuracy (model / prior)',
        'Brier (model / prior / uniform)',
        'NLL (model / prior / uniform)',
        'ECE (chance floor)',
        'score MAE (model / prior / uniform)',
      ]
    : [
        'type',
        'n',
        'accuracy (model / uniform)',
        'Brier (model / uniform)',
        'NLL (model / uniform)',
        'ECE',
        'score MAE (model / uniform)',
      ];
  const rows = TYPES.flatMap((t) => {
    const b = blocks[t];
    if (!b || b.model.n === 0) return [];
    const ref = withPrior ? b.prior : undefined;
    const three = (k: 'brier' | 'nll' | 'scoreMae', d: number) =>
      [b.model[k], ...(withPrior ? [ref?.[k]] : []), b.uniform[k]].map((v) => f(v, d)).join(' / ');
    return [
      [
        code(t),
        String(b.model.n),
        `${f(b.model.accuracy)} / ${f(withPrior ? ref?.accuracy : b.uniform.accuracy)}`,
        three('brier', 4),
        three('nll', 3),
        b.eceFloor === undefined ? f(b.model.ece) : `${f(b.model.ece)} (${f(b.eceFloor)})`,
        t === 'score' ? three('scoreMae', 3) : '-',
      ],
    ];
  });
  return table(header, rows);
}

/** The section of the card under `## <title>`, as Markdown, or undefined. */
export function cardSection(card: string, title: string): string | undefined {
  const start = card.indexOf(`\n## ${title}`);
  if (start < 0) return undefined;
  const bodyStart = card.indexOf('\n', start + 1);
  const end = card.indexOf('\n## ', bodyStart);
  return card.slice(bodyStart + 1, end < 0 ? undefined : end).trim();
}

export function renderCalibration(report: Report, card: string): string {
  const title = /^# Model card: (\S+)/m.exec(card)?.[1] ?? 'brier-lite';
  const diagrams = parseCardDiagrams(card);
  if (diagrams.length === 0) throw new Error('no reliability bins in MODEL_CARD.md');
  const limits = cardSection(card, 'What it cannot do (read this before relying on it)');
  const out: string[] = [
    generatedNote('docs/scripts/model-card.ts from models/brier-lite/report.json and MODEL_CARD.md'),
    '',
    `The numbers below are those of ${code(title)}, the embedded default, as measured by \`npm run train\` (report.json and the [model card](#the-model-card-s-limits)).`,
    '',
    '### Held-out tasks, leave-tasks-out (the honest transfer number)',
    '',
    'For each task the head is trained without it, the betas are fitted without it, and its temperature and mixing weight are fitted on the other tasks only (on their scores from betas that never saw it either): how the model does on a kind of question it has never seen.',
    '',
    metricsTable(report.leaveTasksOut, true),
    '',
    ...(report.seenAllRowsCrossValidated
      ? [
          '### Training tasks, in distribution: every row, cross-validated',
          '',
          "Every row of the training sets scored by a head that did not train on it (the shipped head on the held-out 20%, fold heads on the rest), each task's temperature and mixing weight cross-fitted on rows its head did not see: how the model does on questions like its training tasks, on five times the rows of the next table.",
          '',
          metricsTable(report.seenAllRowsCrossValidated, true),
          '',
        ]
      : []),
    '### Held-out rows of the training tasks (the shipped head only)',
    '',
    'Rows of the training sets that the shipped head never saw (20% by id hash), calibration cross-fitted in five folds.',
    '',
    metricsTable(report.seen, true),
    '',
    '### Held-out tasks, shipped model',
    '',
    'The same held-out tasks scored by the shipped artifact: its head never saw them, but its `unseen` calibration was fitted on them.',
    '',
    metricsTable(report.heldOutTasksShipped, true),
    '',
    '### Out of distribution: CalDec validation',
    '',
    'Assistant decisions with JSON states and soft targets from a large teacher model (not human labels); accuracy and ECE on decisions whose target has a unique maximum.',
    '',
    metricsTable(report.caldec, false),
    '',
    ...(report.paraphrase ? ['### Paraphrase suite', '', cardSection(card, 'Paraphrase suite') ?? '', ''] : []),
    '### Reliability diagrams',
    '',
    'Each bar is one of the 15 equal-width bins of the top probability: its height is the observed accuracy, the dot sits at the mean predicted top probability of the bin (larger and darker for more answers). A calibrated bin has its dot on the diagonal. Hover a bar for its numbers.',
    '',
  ];
  for (const d of diagrams) {
    const n = d.bins.reduce((a, b) => a + b.n, 0);
    out.push(
      `#### ${inline(d.title)}`,
      '',
      `${n} answers.`,
      '',
      `<figure class="reliability-figure">${reliabilitySvg(d)}</figure>`,
      '',
    );
  }
  out.push(
    '### Per set',
    '',
    'Leave-tasks-out on every set; training sets also on their held-out rows and on every row, cross-validated.',
    '',
  );
  out.push(
    table(
      [
        'set',
        'role',
        'n',
        'accuracy (model / prior)',
        'Brier (model / uniform)',
        'ECE',
        'held-out rows: accuracy / Brier / ECE',
        'every row, cross-validated: n / accuracy / ECE (chance floor)',
      ],
      Object.entries(report.perTask).map(([name, t]) => {
        const b = t.leaveTaskOut;
        const h = t.heldOutRows;
        const a = t.allRowsCrossValidated;
        return [
          code(name),
          inline(t.role),
          String(b.model.n),
          `${f(b.model.accuracy)} / ${f(b.prior?.accuracy)}`,
          `${f(b.model.brier, 4)} / ${f(b.uniform.brier, 4)}`,
          f(b.model.ece),
          h ? `${f(h.model.accuracy)} / ${f(h.model.brier, 4)} / ${f(h.model.ece)}` : '-',
          a ? `${a.model.n} / ${f(a.model.accuracy)} / ${f(a.model.ece)} (${f(a.eceFloor)})` : '-',
        ];
      }),
    ),
    '',
  );
  if (report.latency) {
    const l = report.latency;
    out.push(
      '### Latency',
      '',
      `Measured in-process at training time (${l.runs} runs, a ~${l.stateTokens}-token state and 3 questions):`,
      '',
      table(
        ['case', 'p50 (ms)', 'p90 (ms)'],
        [
          ['same request repeated (all embeddings cached)', f(l.cachedP50, 1), f(l.cachedP90, 1)],
          ['a new state, questions cached', f(l.newStateP50, 1), f(l.newStateP90, 1)],
          ['nothing cached', f(l.coldP50, 1), '-'],
          ['load (two encoder workers)', f(l.loadMs, 0), '-'],
        ],
      ),
      '',
    );
  }
  if (limits) {
    if (/[<{]/.test(limits))
      throw new Error('MODEL_CARD.md "What it cannot do" holds < or {: escape it before including');
    out.push(
      "### The model card's limits",
      '',
      'Quoted from the model card, which `npm run train` writes:',
      '',
      limits,
      '',
    );
  }
  return out.join('\n');
}

/**
 * "What it cannot do" (brier-lite 4.1, issue 38): the kinds of question the skill model answers uniform,
 * and every set's and CalDec site's held-out numbers, from report.json's `skill` section.
 */
export function renderCannotDo(report: Report): string {
  const skill = report.skill;
  const out = [generatedNote('docs/scripts/model-card.ts from models/brier-lite/report.json')];
  if (!skill)
    return [...out, '', 'This model has no measured skill table (a model before brier-lite 4.1).', ''].join('\n');
  const rows = [...skill.sets, ...skill.caldec];
  const informativeBelow = rows.filter((r) => r.informative < 0.5).map((r) => r.name);
  out.push(
    '',
    `It answers **uniform** (\`x_abstained: true\`) on questions like these kinds, whose measured skill held out by set was below ${skill.floor}: ${skill.abstains.map((a) => `${inline(a.unit)} (${a.type})`).join(', ')}.`,
    '',
    `Held out by set, it abstains on most questions of: ${informativeBelow.map((n) => inline(n)).join(', ') || 'none'}.`,
    '',
    'Every set and CalDec site, each answered by a model fitted without it (skill, informative rate, accuracy, Brier against the uniform answer, ECE with its chance floor):',
    '',
    table(
      ['set / site', 'read as', 'n', 'skill', 'informative', 'accuracy', 'Brier', 'uniform', 'ECE (floor)'],
      rows.map((r) => [
        inline(r.name),
        r.family,
        String(r.n),
        f(r.skill, 2),
        f(r.informative, 2),
        f(r.accuracy),
        f(r.brier, 4),
        f(r.uniformBrier, 4),
        `${f(r.ece)} (${f(r.eceFloor)})`,
      ]),
    ),
    '',
  );
  return out.join('\n');
}

export function generateCalibration(docsDir = DOCS_DIR, modelDir = MODEL_DIR): void {
  const report = JSON.parse(fs.readFileSync(path.join(modelDir, 'report.json'), 'utf8')) as Report;
  const card = fs.readFileSync(path.join(modelDir, 'MODEL_CARD.md'), 'utf8');
  writeFiles(docsDir, [
    { file: '_generated/calibration.md', content: renderCalibration(report, card) },
    { file: '_generated/cannot-do.md', content: renderCannotDo(report) },
  ]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  generateCalibration();
  console.log('docs: calibration page from models/brier-lite');
}
