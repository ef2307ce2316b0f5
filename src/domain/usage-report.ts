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
  /** Calls made to a teacher by adapters' fallback (issue 34). */
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

export interface UsageReport {
  window: { days: number; from: string; to: string };
  totals: UsageCounts;
  daily: UsageDay[];
  keys: KeyUsage[];
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
 * Usage by UTC day over the last `days` days (today included), zero-filled. An `errors` count is a
 * request answered with a status of 400 or more.
 */
export function createUsageReporter(db: Db, options: { now?: () => number } = {}) {
  const now = options.now ?? Date.now;

  async function rows(filter: { userId: string; keyId?: string }, fromMs: number) {
    let q = db.kysely
      .selectFrom('usage_event')
      .select((eb) => [
        'key_id',
        sql<number | string>`(ts / ${sql.lit(DAY_MS)})`.as('day'),
        eb.fn.countAll<number | string>().as('requests'),
        eb.fn.sum<number | string>('input_tokens').as('input_tokens'),
        eb.fn.sum<number | string>('output_tokens').as('output_tokens'),
        eb.fn.sum<number | string>('questions').as('questions'),
        eb.fn.sum<number | string>('teacher_calls').as('teacher_calls'),
        sql<number | string>`sum(case when status >= 400 then 1 else 0 end)`.as('errors'),
      ])
      .where('user_id', '=', filter.userId)
      .where('ts', '>=', fromMs);
    if (filter.keyId) q = q.where('key_id', '=', filter.keyId);
    return q.groupBy(['key_id', sql`(ts / ${sql.lit(DAY_MS)})`]).execute();
  }

  /**
   * `keyId` set: that key alone (bearer callers). Otherwise `totals`/`daily` cover every key of the
   * account (revoked ones included, so that totals do not shrink on revocation) and `keys` lists
   * the active keys.
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
    const all = new Map<number, UsageCounts>();
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
      let byDay = perKey.get(r.key_id);
      if (!byDay) {
        byDay = new Map();
        perKey.set(r.key_id, byDay);
      }
      const k = byDay.get(day) ?? zero();
      add(k, counts);
      byDay.set(day, k);
      const a = all.get(day) ?? zero();
      add(a, counts);
      all.set(day, a);
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
    };
  }

  return { report };
}

export type UsageReporter = ReturnType<typeof createUsageReporter>;
