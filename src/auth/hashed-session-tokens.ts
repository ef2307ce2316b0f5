import type { BetterAuthPlugin, DBAdapter, DBTransactionAdapter, Where } from 'better-auth';
import { hashSessionToken } from '../lib/token-hash.ts';

export { hashSessionToken };

/**
 * Endpoints that hand a stored token back to better-auth (list-sessions, then revoke-session, and
 * revoke-other-sessions, which compares listed tokens with the current one). With hashed tokens they
 * would silently revoke nothing, so they are off; the console does not use them. Sign-out,
 * revoke-sessions (by user), password change and reset, and account deletion work by the cookie's token
 * or by user id.
 */
export const PATHS_NEEDING_CLEAR_TOKENS = ['/list-sessions', '/revoke-session', '/revoke-other-sessions'];

/** Operators that keep their meaning when both sides are hashed (equality and set membership). */
const EQUALITY = new Set(['eq', 'ne', 'in', 'not_in']);

type Rows = Map<string, string>;

function hashValue(value: Where['value'], raw: Rows): Where['value'] {
  const one = (token: string) => {
    const hashed = hashSessionToken(token);
    raw.set(hashed, token);
    return hashed;
  };
  if (typeof value === 'string') return one(value);
  if (Array.isArray(value) && value.every((v): v is string => typeof v === 'string')) return value.map(one);
  return value;
}

function hashWhere<W extends Where[] | undefined>(where: W, raw: Rows): W {
  if (!where) return where;
  return where.map((w) => {
    if (w.field !== 'token') return w;
    const operator = w.operator ?? 'eq';
    if (!EQUALITY.has(operator)) {
      throw new Error(`session.token holds hashes: the ${operator} operator cannot be applied to it`);
    }
    return { ...w, value: hashValue(w.value, raw) };
  }) as W;
}

function hashToken<D>(data: D, raw: Rows): D {
  if (!data || typeof data !== 'object' || !('token' in data) || typeof data.token !== 'string') return data;
  return { ...data, token: hashValue(data.token, raw) };
}

/** Puts back the token the caller presented, where a row was found (or written) by it. */
function restore<R>(row: R, raw: Rows): R {
  if (!row || typeof row !== 'object' || !('token' in row) || typeof row.token !== 'string') return row;
  const token = raw.get(row.token);
  return token === undefined ? row : { ...row, token };
}

function wrapOperations(inner: DBTransactionAdapter): DBTransactionAdapter {
  const session = (model: string) => model === 'session';
  return {
    ...inner,
    async create(data) {
      if (!session(data.model)) return inner.create(data);
      const raw: Rows = new Map();
      return restore(await inner.create({ ...data, data: hashToken(data.data, raw) }), raw);
    },
    async findOne(data) {
      if (!session(data.model)) return inner.findOne(data);
      const raw: Rows = new Map();
      return restore(await inner.findOne({ ...data, where: hashWhere(data.where, raw) }), raw);
    },
    async findMany<T>(data: Parameters<DBTransactionAdapter['findMany']>[0]) {
      if (!session(data.model)) return inner.findMany<T>(data);
      const raw: Rows = new Map();
      const rows = await inner.findMany<T>({ ...data, where: hashWhere(data.where, raw) });
      return rows.map((row) => restore(row, raw));
    },
    async count(data) {
      if (!session(data.model)) return inner.count(data);
      return inner.count({ ...data, where: hashWhere(data.where, new Map()) });
    },
    async update(data) {
      if (!session(data.model)) return inner.update(data);
      const raw: Rows = new Map();
      const where = hashWhere(data.where, raw);
      return restore(await inner.update({ ...data, where, update: hashToken(data.update, raw) }), raw);
    },
    async updateMany(data) {
      if (!session(data.model)) return inner.updateMany(data);
      const raw: Rows = new Map();
      return inner.updateMany({ ...data, where: hashWhere(data.where, raw), update: hashToken(data.update, raw) });
    },
    async delete(data) {
      if (!session(data.model)) return inner.delete(data);
      return inner.delete({ ...data, where: hashWhere(data.where, new Map()) });
    },
    async deleteMany(data) {
      if (!session(data.model)) return inner.deleteMany(data);
      return inner.deleteMany({ ...data, where: hashWhere(data.where, new Map()) });
    },
    async consumeOne(data) {
      if (!session(data.model)) return inner.consumeOne(data);
      const raw: Rows = new Map();
      return restore(await inner.consumeOne({ ...data, where: hashWhere(data.where, raw) }), raw);
    },
    async incrementOne(data) {
      if (!session(data.model)) return inner.incrementOne(data);
      const raw: Rows = new Map();
      const where = hashWhere(data.where, raw);
      return restore(await inner.incrementOne({ ...data, where, set: hashToken(data.set, raw) }), raw);
    },
  };
}

/** The adapter with session tokens hashed on the way in; transactions hand out wrapped adapters too. */
export function withHashedSessionTokens(adapter: DBAdapter): DBAdapter {
  return {
    ...adapter,
    ...wrapOperations(adapter),
    transaction: (callback) => adapter.transaction((trx) => callback(wrapOperations(trx))),
  };
}

/**
 * Stores session tokens hashed, so that a copy of the database opens no session.
 *
 * better-auth 1.7 has no option for it (it hashes verification identifiers on request, not session
 * tokens), and its field `transform` cannot help: the row it writes is the row it returns, and the
 * cookie is signed from that row's token. So this plugin does it at the one seam better-auth offers for
 * it: a plugin's `init` may replace `context.adapter`, and better-auth builds its internal adapter over
 * the replaced one afterwards. The wrapper touches only the `session` model's `token` field: values
 * written are hashed, equality and `in` conditions on it are hashed (other operators throw), and a row
 * found or written by a token the caller presented gets that token back, so that the cookie, refresh
 * (updateAge) and sign-out keep working. Rows listed by user carry the hash, which opens nothing (see
 * PATHS_NEEDING_CLEAR_TOKENS). Migration 0004 hashes the tokens stored before this.
 */
export function hashedSessionTokens(): BetterAuthPlugin {
  return {
    id: 'brier-hashed-session-tokens',
    init: (ctx) => ({ context: { adapter: withHashedSessionTokens(ctx.adapter) } }),
  };
}
