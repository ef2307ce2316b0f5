import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { makePrivateDir, PRIVATE_FILE_MODE, tightenFile } from '../lib/private-files.ts';
import type { Logger } from '../observability/logger.ts';
import type { Database } from './schema.ts';
import { nodeSqliteDialect } from './sqlite.ts';
import { isDatabaseUnavailable } from './unavailable.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>;
  /**
   * How many times a connection or query has failed because the database was unreachable or too slow
   * (isDatabaseUnavailable), since start: a request that saw it grow may have been answered from a
   * swallowed failure (better-auth answers 500 or no session), and is answered 503 instead.
   */
  outages(): number;
  close(): Promise<void>;
}

export interface OpenDbOptions {
  /** PostgreSQL only: run every query in this schema (created if missing). Used by tests for isolation. */
  schema?: string;
  /** SQLite only: told when an existing database file was readable by others and was made 0600. */
  logger?: Pick<Logger, 'warn'> | undefined;
  /**
   * PostgreSQL only (BRIER_DB_TIMEOUT_MS): the longest wait for a pooled connection and for one query.
   * A database that is down or stalled then fails requests within this (503 with retry-after) instead
   * of holding them. Default: no limit.
   */
  timeoutMs?: number;
}

/**
 * Opens `file:<path>` (SQLite through node:sqlite) or `postgres://...`. A SQLite database is readable
 * by its owner only, whatever the umask: the folders created for it are 0700, the file is created
 * 0600 before SQLite opens it (SQLite gives its -wal and -shm files the database file's mode), and an
 * existing database, -wal, -shm or -journal file with a wider mode is made 0600.
 */
export async function openDb(url: string, options: OpenDbOptions = {}): Promise<Db> {
  if (url.startsWith('file:')) {
    const file = url.slice('file:'.length);
    if (file !== ':memory:') preparePrivateFile(path.resolve(file), options.logger);
    const { dialect } = nodeSqliteDialect(file);
    return wrap(new Kysely<Database>({ dialect }), 'sqlite', () => 0);
  }
  if (options.schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(options.schema)) {
    throw new Error(`invalid schema name ${options.schema}`);
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    ...(options.timeoutMs ? { connectionTimeoutMillis: options.timeoutMs, query_timeout: options.timeoutMs } : {}),
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // An idle pooled connection that the server drops (a restart, a failover) emits 'error' on the
  // pool; unheard, that would end the process. The next query opens a new connection instead.
  let outages = 0;
  const note = (err: unknown) => {
    if (isDatabaseUnavailable(err)) outages++;
  };
  pool.on('error', (err) => {
    note(err);
    options.logger?.warn({ err }, 'database connection lost; reconnecting on next use');
  });
  // Kysely logs failed queries, not failed connections: count those where the pool hands them out.
  // And a connection that dies while checked out emits 'error' on its client, which neither pg's pool
  // nor Kysely listens to then: unheard, it would end the process. Its query fails anyway (503).
  const connect = pool.connect.bind(pool);
  const heard = new WeakSet<pg.PoolClient>();
  const counted = async () => {
    try {
      const client = await connect();
      if (!heard.has(client)) {
        heard.add(client);
        client.on('error', note);
      }
      return client;
    } catch (err) {
      note(err);
      throw err;
    }
  };
  pool.connect = counted as typeof pool.connect;
  const kysely = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === 'error') note(event.error);
    },
  });
  if (options.schema) await sql`create schema if not exists ${sql.id(options.schema)}`.execute(kysely);
  return wrap(kysely, 'postgres', () => outages);
}

function preparePrivateFile(file: string, logger: OpenDbOptions['logger']): void {
  makePrivateDir(path.dirname(file));
  try {
    fs.closeSync(fs.openSync(file, 'wx', PRIVATE_FILE_MODE));
    fs.chmodSync(file, PRIVATE_FILE_MODE);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    const was = tightenFile(f);
    if (was !== undefined) {
      logger?.warn({ file: f, mode: `0${was.toString(8)}` }, 'database file was readable by others: made it 0600');
    }
  }
}

function wrap(kysely: Kysely<Database>, dialect: Dialect, outages: () => number): Db {
  return {
    kysely,
    dialect,
    outages,
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
