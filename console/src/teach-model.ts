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

/** Whether a job is still going (the page polls while one is). */
export const isActive = (status: string) => status === 'queued' || status === 'running';
