import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';
import { nodeSqliteDialect } from './sqlite.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenDbOptions {
  /** PostgreSQL only: run every query in this schema (created if missing). Used by tests for isolation. */
  schema?: string;
}

/** Opens `file:<path>` (SQLite through node:sqlite) or `postgres://...`. */
export async function openDb(url: string, options: OpenDbOptions = {}): Promise<Db> {
  if (url.startsWith('file:')) {
    const file = url.slice('file:'.length);
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const { dialect } = nodeSqliteDialect(file);
    return wrap(new Kysely<Database>({ dialect }), 'sqlite');
  }
  if (options.schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(options.schema)) {
    throw new Error(`invalid schema name ${options.schema}`);
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  if (options.schema) await sql`create schema if not exists ${sql.id(options.schema)}`.execute(kysely);
  return wrap(kysely, 'postgres');
}

function wrap(kysely: Kysely<Database>, dialect: Dialect): Db {
  return {
    kysely,
    dialect,
    async ping() {
      try {
        await sql`select 1`.execute(kysely);
        return true;
      } catch {
        return false;
      }
    },
    close: () => kysely.destroy(),
  };
}
