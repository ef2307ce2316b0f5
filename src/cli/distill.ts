import fs from 'node:fs';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import type { Config } from '../config.ts';
import { createAdapterStore } from '../domain/adapters.ts';
import { createDistillStore } from '../domain/distill.ts';
import { createDistillation } from '../domain/distill-jobs.ts';
import { createExampleStore } from '../domain/examples.ts';
import { createJobQueue } from '../domain/jobs.ts';
import { counted } from '../lib/plural.ts';
import { UPLOAD_LIMITS } from '../systemone/examples.ts';
import { Question, QuestionId, type WireQuestion } from '../systemone/protocol.ts';
import { parseStatesJsonl } from '../systemone/states.ts';
import type { CliIo } from './keys.ts';
import { onAccount } from './on-account.ts';

const USAGE = `usage:
  brier distill teachers                                the teachers this server offers (BRIER_TEACHERS)
  brier distill states --email <email> <file.jsonl>     store unlabelled states (one {"state": ...} per line)
  brier distill start --email <email> --teacher <id> --questions <file.json>
        [--retained] [--budget <calls>] [--max-states <n>] [--concurrency <n>] [--fallback <0..1>] [--dry-run]
                                                        queue a distillation job (--dry-run: its teacher calls, nothing queued)`;

/** Reads a file within the upload bound, or says why not. */
function readBounded(file: string, io: CliIo): string | null {
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch {
    io.stderr(`${file}: no such file`);
    return null;
  }
  if (size > UPLOAD_LIMITS.maxBytes) {
    io.stderr(`${file}: ${size} bytes; at most ${UPLOAD_LIMITS.maxBytes} (the limit): split the file`);
    return null;
  }
  return fs.readFileSync(file, 'utf8');
}

const Questions = z
  .record(QuestionId, Question)
  .refine((q) => Object.keys(q).length >= 1 && Object.keys(q).length <= 16, '1 to 16 questions');

/**
 * `brier distill ...`: distillation (issue 34) on the local database, as the control plane does it:
 * unlabelled states, and a distillation job queued for the server's runner (which holds the teachers'
 * keys). Returns the exit code.
 */
export async function runDistillCommand(argv: string[], config: Config, io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  let parsed: ReturnType<typeof parse>;
  function parse() {
    return parseArgs({
      args: rest,
      options: {
        email: { type: 'string' },
        teacher: { type: 'string' },
        questions: { type: 'string' },
        retained: { type: 'boolean' },
        budget: { type: 'string' },
        'max-states': { type: 'string' },
        concurrency: { type: 'string' },
        fallback: { type: 'string' },
        'dry-run': { type: 'boolean' },
      },
      allowPositionals: true,
    });
  }
  try {
    parsed = parse();
  } catch (e) {
    io.stderr(`${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
    return 2;
  }
  const v = parsed.values;
  if (sub === 'teachers') {
    for (const t of config.teachers) io.stdout(`${t.id}\t${t.kind}\tconcurrency ${t.concurrency}`);
    io.stdout(`${config.teachers.length} teachers`);
    return 0;
  }
  if (!sub || !['states', 'start'].includes(sub) || !v.email || !/^[^@\s]+@[^@\s]+$/.test(v.email)) {
    io.stderr(USAGE);
    return 2;
  }
  if (sub === 'states') {
    const file = parsed.positionals[0];
    if (!file) {
      io.stderr(`states: name the JSON Lines file\n${USAGE}`);
      return 2;
    }
    const text = readBounded(file, io);
    if (text === null) return 1;
    return onAccount(config, v.email, io, async (db, account) => {
      const stored = await createDistillStore(db).addStates(account.id, parseStatesJsonl(text));
      io.stdout(`stored ${stored.added} unlabelled states; the account has ${stored.total}`);
      return 0;
    });
  }
  const teacher = config.teachers.find((t) => t.id === v.teacher);
  if (!teacher) {
    io.stderr(
      `--teacher: ${v.teacher ? `no teacher ${JSON.stringify(v.teacher)}` : 'name a teacher'}; this server offers ${config.teachers.map((t) => t.id).join(', ') || 'none (BRIER_TEACHERS)'}`,
    );
    return 2;
  }
  if (!v.questions) {
    io.stderr(`--questions: name a JSON file of {"<id>": <question>}\n${USAGE}`);
    return 2;
  }
  const text = readBounded(v.questions, io);
  if (text === null) return 1;
  let questions: Record<string, WireQuestion>;
  try {
    const q = Questions.safeParse(JSON.parse(text));
    if (!q.success) {
      io.stderr(`--questions: ${q.error.issues[0]?.path.join('.') ?? ''}: ${q.error.issues[0]?.message ?? 'invalid'}`);
      return 2;
    }
    questions = q.data as Record<string, WireQuestion>;
  } catch {
    io.stderr('--questions: not valid JSON');
    return 2;
  }
  const int = (name: string, value: string | undefined, min: number, max: number, fallback?: number) => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name}: an integer from ${min} to ${max}`);
    return n;
  };
  let numbers: { budget?: number | undefined; maxStates: number; concurrency: number; fallback: number | null };
  try {
    const fallback = v.fallback === undefined ? null : Number(v.fallback);
    if (fallback !== null && !(fallback >= 0 && fallback <= 1)) throw new Error('--fallback: a number from 0 to 1');
    numbers = {
      budget: int('budget', v.budget, 1, 100_000),
      maxStates: int('max-states', v['max-states'], 20, 20_000, 2000) as number,
      concurrency: int('concurrency', v.concurrency, 1, 16, 4) as number,
      fallback,
    };
  } catch (e) {
    io.stderr((e as Error).message);
    return 2;
  }
  return onAccount(config, v.email, io, async (db, account) => {
    const distill = createDistillation({
      distill: createDistillStore(db),
      examples: createExampleStore(db),
      jobs: createJobQueue(db),
      adapters: createAdapterStore(db),
    });
    const { estimate, job } = await distill.start(
      account.id,
      { id: teacher.id, concurrency: teacher.concurrency, msPerCall: null },
      {
        questions: Object.values(questions),
        source: v.retained ? 'retained' : 'states',
        maxStates: numbers.maxStates,
        budget: numbers.budget,
        concurrency: numbers.concurrency,
        humanWeight: 3,
        fallbackThreshold: numbers.fallback,
        dryRun: v['dry-run'] === true,
      },
    );
    io.stdout(
      `${counted(estimate.states, 'state')} (${estimate.already_labelled} already labelled by ${estimate.teacher}), ${counted(estimate.templates, 'template')}: ${counted(estimate.teacher_calls, 'teacher call')} (budget ${estimate.budget}), ${counted(estimate.teacher_questions, 'question')} at most`,
    );
    if (job) io.stdout(`${job.id} queued: a server with BRIER_TRAINING_JOBS=on and this teacher runs it`);
    return 0;
  });
}
