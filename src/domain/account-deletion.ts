import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import type { KeyService } from './keys.ts';
import type { UsageRecorder } from './usage.ts';
import { errorCount, requestCount } from './usage-report.ts';

const DAY_MS = 86_400_000;

/**
 * Deletes an account: its keys stop working at once, its usage is folded into daily totals with no
 * user or key (usage_aggregate), and the user row goes with its sessions, linked accounts and keys.
 */
export function createAccountDeletion(db: Db, keys: KeyService, usage: UsageRecorder) {
  async function remove(userId: string): Promise<{ revokedKeys: number }> {
    const revokedKeys = await keys.revokeAll(userId);
    // Events still buffered in memory belong in the aggregate too.
    await usage.flush();
    await db.kysely.transaction().execute(async (tx) => {
      const grouped = await tx
        .selectFrom('usage_event')
        .select((eb) => [
          sql<number | string>`(ts / ${sql.lit(DAY_MS)})`.as('day'),
          'route',
          'model',
          requestCount.as('requests'),
          errorCount.as('errors'),
          eb.fn.sum<number | string>('questions').as('questions'),
          eb.fn.sum<number | string>('input_tokens').as('input_tokens'),
          eb.fn.sum<number | string>('output_tokens').as('output_tokens'),
          eb.fn.sum<number | string>('teacher_calls').as('teacher_calls'),
        ])
        .where('user_id', '=', userId)
        .groupBy([sql`(ts / ${sql.lit(DAY_MS)})`, 'route', 'model'])
        .execute();
      for (const g of grouped) {
        const row = {
          day: new Date(Number(g.day) * DAY_MS).toISOString().slice(0, 10),
          route: g.route,
          model: g.model,
          requests: Number(g.requests),
          errors: Number(g.errors ?? 0),
          questions: Number(g.questions ?? 0),
          input_tokens: Number(g.input_tokens ?? 0),
          output_tokens: Number(g.output_tokens ?? 0),
          teacher_calls: Number(g.teacher_calls ?? 0),
        };
        await tx
          .insertInto('usage_aggregate')
          .values(row)
          .onConflict((oc) =>
            oc.columns(['day', 'route', 'model']).doUpdateSet((eb) => ({
              requests: eb('usage_aggregate.requests', '+', row.requests),
              errors: eb('usage_aggregate.errors', '+', row.errors),
              questions: eb('usage_aggregate.questions', '+', row.questions),
              input_tokens: eb('usage_aggregate.input_tokens', '+', row.input_tokens),
              output_tokens: eb('usage_aggregate.output_tokens', '+', row.output_tokens),
              teacher_calls: eb('usage_aggregate.teacher_calls', '+', row.teacher_calls),
            })),
          )
          .execute();
      }
      await tx.deleteFrom('usage_event').where('user_id', '=', userId).execute();
      await tx.deleteFrom('api_key').where('user_id', '=', userId).execute();
      await tx.deleteFrom('session').where('userId', '=', userId).execute();
      await tx.deleteFrom('account').where('userId', '=', userId).execute();
      await tx.deleteFrom('verification').where('value', '=', userId).execute();
      await tx.deleteFrom('user').where('id', '=', userId).execute();
    });
    return { revokedKeys };
  }
  return { remove };
}

export type AccountDeletion = ReturnType<typeof createAccountDeletion>;
