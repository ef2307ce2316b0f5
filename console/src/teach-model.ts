/**
 * The console's "teach your task" page, the parts without a browser: CSV to the upload's JSON Lines,
 * and how metrics and reliability bins are shown. Tested in test/console/teach-model.test.ts.
 */

/** Splits CSV text (RFC 4180: quoted fields, doubled quotes, line breaks inside quotes) into records. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const src = text.replace(/^\uFEFF/, '');
  while (i < src.length) {
    const c = src[i];
    if (quoted) {
      if (c === '"') {
        if (src[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        continue;
      }
      field += c;
      i++;
      continue;
    }
    if (c === '"' && field === '') {
      quoted = true;
      i++;
    } else if (c === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (c === '\n' || c === '\r') {
      record.push(field);
      field = '';
      if (record.some((f) => f !== '')) records.push(record);
      record = [];
      i += c === '\r' && src[i + 1] === '\n' ? 2 : 1;
    } else {
      field += c;
      i++;
    }
  }
  record.push(field);
  if (record.some((f) => f !== '')) records.push(record);
  return records;
}

export type QuestionType = 'noul' | 'choice' | 'score';

/** The question every CSV row is labelled for, as the form describes it. */
export interface CsvQuestion {
  type: QuestionType;
  instructions: string;
  /** choice: one label per line (optionally "label: description"); score: the levels, lowest first. */
  options: string;
}

/** The System One question of the form (what the template is). */
export function questionOf(q: CsvQuestion): Record<string, unknown> {
  const lines = q.options
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const instructions = q.instructions.trim() || undefined;
  if (q.type === 'noul') return { type: 'noul', ...(instructions ? { instructions } : {}) };
  if (q.type === 'score') return { type: 'score', ...(instructions ? { instructions } : {}), criteria: lines };
  const criteria: Record<string, string | null> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    const label = (at > 0 ? line.slice(0, at) : line).trim();
    criteria[label] = at > 0 ? line.slice(at + 1).trim() || null : null;
  }
  return { type: 'choice', ...(instructions ? { instructions } : {}), criteria };
}

function labelValue(type: QuestionType, raw: string): unknown {
  const v = raw.trim();
  if (type === 'noul') {
    if (/^(true|yes|1)$/i.test(v)) return true;
    if (/^(false|no|0)$/i.test(v)) return false;
    return v;
  }
  if (type === 'score' && /^\d+$/.test(v)) return Number(v);
  return v;
}

/**
 * CSV with a header row naming a `state` and a `label` column (any others are ignored) to the
 * upload's JSON Lines, one line per data row, so that the server's "line N" is data row N.
 */
export function csvToJsonl(text: string, question: CsvQuestion): { jsonl: string; rows: number } {
  const [header, ...rows] = parseCsv(text);
  if (!header) throw new Error('the CSV file is empty');
  const names = header.map((h) => h.trim().toLowerCase());
  const stateAt = names.indexOf('state');
  const labelAt = names.indexOf('label');
  if (stateAt < 0 || labelAt < 0) {
    throw new Error(
      `the CSV header needs a "state" and a "label" column; it has ${header.map((h) => JSON.stringify(h)).join(', ')}`,
    );
  }
  const q = questionOf(question);
  const lines = rows.map((r) =>
    JSON.stringify({
      state: r[stateAt] ?? '',
      questions: { q },
      labels: { q: labelValue(question.type, r[labelAt] ?? '') },
    }),
  );
  return { jsonl: `${lines.join('\n')}\n`, rows: lines.length };
}

/**
 * A server message about an upload made from CSV, in the CSV's terms: its data rows (JSON Lines line
 * N is data row N) and its columns, never the question id `q` the conversion chose.
 */
export function inCsvTerms(message: string): string {
  return message
    .replace(/\bline (\d+)/g, 'data row $1')
    .replace(/\blabels\.q\b/g, 'the "label" column')
    .replace(/\bquestions\.q\b/g, 'the question (as the form describes it)')
    .replace(/(data row \d+): state:/g, '$1: the "state" column:');
}

/** A metric for a table cell: 3 decimals, or a dash. */
export function metric(v: number | null | undefined, digits = 3): string {
  return typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '–';
}

export interface Bin {
  lo: number;
  hi: number;
  n: number;
  confidence: number;
  accuracy: number;
}

/** The points of a reliability curve in a unit square (x: mean confidence, y: accuracy), bins with rows only. */
export function reliabilityPoints(bins: readonly Bin[]): { x: number; y: number; n: number }[] {
  return bins.filter((b) => b.n > 0).map((b) => ({ x: b.confidence, y: b.accuracy, n: b.n }));
}

/** A duration in words: "about 40 s", "about 3 min", "about 2 h". */
export function roughly(seconds: number): string {
  if (seconds < 90) return `about ${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 90 * 60) return `about ${Math.round(seconds / 60)} min`;
  return `about ${Math.round(seconds / 3600)} h`;
}

/**
 * Where a queued or running job stands, in words: its place in the queue and the time it should still
 * take ("2nd in the queue · about 3 min left"); empty once it has ended.
 */
export function jobOutlook(job: {
  status: string;
  queue_position: number | null;
  estimated_seconds: number | null;
}): string {
  if (!isActive(job.status)) return '';
  const parts: string[] = [];
  if (job.status === 'queued' && job.queue_position !== null) {
    const n = job.queue_position;
    const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
    parts.push(n === 1 ? 'next in the queue' : `${n}${suffix} in the queue`);
  }
  if (job.estimated_seconds !== null) parts.push(`${roughly(job.estimated_seconds)} left`);
  return parts.join(' · ');
}

/** Whether a job is still going (the page polls while one is). */
export const isActive = (status: string) => status === 'queued' || status === 'running';

/** The question text of a template, for tables and headings. */
export function describeQuestion(question: Record<string, unknown>): string {
  const i = question.instructions;
  if (typeof i === 'string') return i;
  return i === null || i === undefined ? '(no instructions)' : JSON.stringify(i);
}

/** How a section of the teach page reports to the page's one message area. */
export interface PageMessages {
  /** An error, with the server's list of problems when it gave one. */
  error(message: string, issues?: string[]): void;
  notice(message: string): void;
  clear(): void;
}

interface HeldOut {
  accuracy: number;
  brier: number;
  nll: number;
  ece: number;
}
interface AgainstTeacher {
  agreement: number;
  brier: number;
  kl: number;
  ece: number;
  accuracy: number | null;
}
/** What of a template's report says why it is served (TemplateReport has it). */
export interface ServingReport {
  served: boolean;
  before: HeldOut | null;
  after: HeldOut | null;
  distill?: { base: AgainstTeacher; adapter: AgainstTeacher | null } | undefined;
}

/** The columns of a template's metric table that decide whether it is served (marked *). */
export const DECIDING = { labelled: ['Brier', 'NLL'], distilled: ['Brier to the teacher', 'KL to the teacher'] };

const worse = (name: string, base: number, adapter: number, lowerIsBetter: boolean) =>
  (lowerIsBetter ? adapter > base : adapter < base) ? `${name} ${metric(adapter)} against ${metric(base)}` : null;

/**
 * What decides whether a template's adapter is served, said next to its metrics: held-out Brier and
 * NLL both lower than the base model's, the Brier by a paired bootstrap's margin (distilled: Brier and
 * KL to the teacher); and, for a served
 * template, the measures shown that are worse than the base model's, which did not decide. Empty for
 * a template that was not fitted (its reason says why).
 */
export function servingNote(report: ServingReport): string {
  if (!report.before || !report.after) return '';
  const d = report.distill;
  if (d) {
    const rule =
      'Served only where, on held-out states, both its Brier and its KL to the teacher are lower than the base model’s (*); agreement, ECE and accuracy are shown but do not decide.';
    const a = d.adapter;
    if (!report.served || !a) return rule;
    const against = [
      worse('agreement', d.base.agreement, a.agreement, false),
      worse('ECE', d.base.ece, a.ece, true),
      a.accuracy !== null && d.base.accuracy !== null ? worse('accuracy', d.base.accuracy, a.accuracy, false) : null,
    ].filter((x) => x !== null);
    return against.length > 0 ? `${rule} Served with a worse ${against.join(', ')}.` : rule;
  }
  const rule =
    'Served only where, on examples each answered by a fit that never saw it, both its Brier and its NLL are lower than the base model’s (*), the Brier by more than chance (a paired bootstrap’s 90% lower bound of the gain above 0); otherwise the base model answers. Accuracy and ECE are shown but do not decide.';
  if (!report.served) return rule;
  const against = [
    worse('accuracy', report.before.accuracy, report.after.accuracy, false),
    worse('ECE', report.before.ece, report.after.ece, true),
  ].filter((x) => x !== null);
  return against.length > 0 ? `${rule} Served with a worse ${against.join(', ')}.` : rule;
}
