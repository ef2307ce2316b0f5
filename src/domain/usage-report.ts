import { sql } from 'kysely';
import type { Db } from '../db/open.ts';

const DAY_MS = 86_400_000;
export const USAGE_MAX_DAYS = 366;
export const USAGE_DEFAULT_DAYS = 30;

export interface UsageCounts {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  questions: number;
  errors: number;
  /** Calls made to a teacher: by adapters' fallback (issue 34) and, in an account's totals, by its distillation jobs (issue 41). */
  teacher_calls: number;
}

export interface UsageDay extends UsageCounts {
  /** UTC day, YYYY-MM-DD. */
  date: string;
}

export interface KeyUsage {
  id: string;
  name: string;
  prefix: string;
  revoked: boolean;
  totals: UsageCounts;
  daily: UsageDay[];
}

/** A distillation job's teacher calls in the window (its counts other than teacher_calls are 0). */
export interface JobUsage {
  id: string;
  teacher: string;
  totals: UsageCounts;
  daily: UsageDay[];
}

export interface UsageReport {
  window: { days: number; from: string; to: string };
  totals: UsageCounts;
  daily: UsageDay[];
  keys: KeyUsage[];
  jobs: JobUsage[];
}

function zero(): UsageCounts {
  return { requests: 0, input_tokens: 0, output_tokens: 0, questions: 0, errors: 0, teacher_calls: 0 };
}

function add(into: UsageCounts, from: UsageCounts): void {
  into.requests += from.requests;
  into.input_tokens += from.input_tokens;
  into.output_tokens += from.output_tokens;
  into.questions += from.questions;
  into.errors += from.errors;
  into.teacher_calls += from.teacher_calls;
}

const isoDay = (dayIndex: number) => new Date(dayIndex * DAY_MS).toISOString().slice(0, 10);

/**
 * Requests and errors among usage events: a distillation job's teacher call (`job_id` set) is an event
 * but not a request. Shared with the account deletion's daily totals.
 */
export const requestCount = sql<number | string>`sum(case when job_id is null then 1 else 0 end)`;
export const errorCount = sql<number | string>`sum(case when job_id is null and status >= 400 then 1 else 0 end)`;

/**
 * Usage by UTC day over the last `days` days (today included), zero-filled. An `errors` count is a
 * request answered with a status of 400 or more.
 */
export function createUsageReporter(db: Db, options: { now?: () => number } = {}) {
  const now = options.now ?? Date.now;

  /** Counts by key (requests) or job (its teacher calls) and day; with `keyId`, that key's and every job's. */
  async function rows(filter: { userId: string; keyId?: string }, fromMs: number) {
    let q = db.kysely
      .selectFrom('usage_event')
      .select((eb) => [
        'key_id',
        'job_id',
        eb.fn.max('model').as('model'),
        sql<number | string>`(ts / ${sql.lit(DAY_MS)})`.as('day'),
        requestCount.as('requests'),
        eb.fn.sum<number | string>('input_tokens').as('input_tokens'),
        eb.fn.sum<number | string>('output_tokens').as('output_tokens'),
        eb.fn.sum<number | string>('questions').as('questions'),
        eb.fn.sum<number | string>('teacher_calls').as('teacher_calls'),
        errorCount.as('errors'),
      ])
      .where('user_id', '=', filter.userId)
      .where('ts', '>=', fromMs);
    const keyId = filter.keyId;
    if (keyId) q = q.where((eb) => eb.or([eb('key_id', '=', keyId), eb('job_id', 'is not', null)]));
    return q.groupBy(['key_id', 'job_id', sql`(ts / ${sql.lit(DAY_MS)})`]).execute();
  }

  /**
   * `keyId` set: that key alone (bearer callers). Otherwise `totals`/`daily` cover every key of the
   * account (revoked ones included, so that totals do not shrink on revocation) and its distillation
   * jobs' teacher calls, and `keys` lists the active keys. `jobs` lists the account's distillation jobs
   * with teacher calls in the window either way (a key's totals do not count them).
   */
  async function report(userId: string, days: number, keyId?: string): Promise<UsageReport> {
    const today = Math.floor(now() / DAY_MS);
    const first = today - days + 1;
    const dayIndexes = Array.from({ length: days }, (_, i) => first + i);
    let keyQuery = db.kysely
      .selectFrom('api_key')
      .select(['id', 'name', 'prefix', 'revoked_at', 'created_at'])
      .where('user_id', '=', userId);
    keyQuery = keyId ? keyQuery.where('id', '=', keyId) : keyQuery.where('revoked_at', 'is', null);
    const keys = await keyQuery.orderBy('created_at', 'asc').execute();
    const grouped = await rows({ userId, ...(keyId ? { keyId } : {}) }, first * DAY_MS);

    const perKey = new Map<string, Map<number, UsageCounts>>();
    const perJob = new Map<string, { teacher: string; first: number; byDay: Map<number, UsageCounts> }>();
    const all = new Map<number, UsageCounts>();
    const addTo = (byDay: Map<number, UsageCounts>, day: number, counts: UsageCounts) => {
      const c = byDay.get(day) ?? zero();
      add(c, counts);
      byDay.set(day, c);
    };
    for (const r of grouped) {
      const day = Number(r.day);
      const counts: UsageCounts = {
        requests: Number(r.requests),
        input_tokens: Number(r.input_tokens ?? 0),
        output_tokens: Number(r.output_tokens ?? 0),
        questions: Number(r.questions ?? 0),
        errors: Number(r.errors ?? 0),
        teacher_calls: Number(r.teacher_calls ?? 0),
      };
      if (r.job_id) {
        const job = perJob.get(r.job_id) ?? {
          teacher: String(r.model ?? '').replace(/^teacher:/, ''),
          first: day,
          byDay: new Map<number, UsageCounts>(),
        };
        job.first = Math.min(job.first, day);
        perJob.set(r.job_id, job);
        addTo(job.byDay, day, counts);
        // A key's report counts its own requests; the account's counts its jobs' teacher calls too.
        if (keyId) continue;
      } else {
        const byDay = perKey.get(r.key_id) ?? new Map<number, UsageCounts>();
        perKey.set(r.key_id, byDay);
        addTo(byDay, day, counts);
      }
      addTo(all, day, counts);
    }
    const series = (byDay: Map<number, UsageCounts> | undefined) => {
      const totals = zero();
      const daily = dayIndexes.map((d) => {
        const c = byDay?.get(d) ?? zero();
        add(totals, c);
        return { date: isoDay(d), ...c };
      });
      return { totals, daily };
    };
    const account = series(all);
    return {
      window: { days, from: isoDay(first), to: isoDay(today) },
      totals: account.totals,
      daily: account.daily,
      keys: keys.map((k) => ({
        id: k.id,
        name: k.name,
        prefix: k.prefix,
        revoked: k.revoked_at !== null,
        ...series(perKey.get(k.id)),
      })),
      jobs: [...perJob]
        .sort(([a, x], [b, y]) => x.first - y.first || (a < b ? -1 : 1))
        .map(([id, j]) => ({ id, teacher: j.teacher, ...series(j.byDay) })),
    };
  }

  return { report };
}

export type UsageReporter = ReturnType<typeof createUsageReporter>;
