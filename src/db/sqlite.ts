import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { type SqliteDatabase, SqliteDialect } from 'kysely';

/**
 * Kysely's SqliteDialect speaks the better-sqlite3 interface; this adapts node:sqlite's
 * DatabaseSync to it, so that SQLite needs no native addon.
 */
export function nodeSqliteDialect(file: string): { dialect: SqliteDialect; raw: DatabaseSync } {
  const raw = new DatabaseSync(file);
  raw.exec('PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;');
  const database: SqliteDatabase = {
    close: () => raw.close(),
    prepare(sql) {
      const stmt = raw.prepare(sql);
      const args = (params: ReadonlyArray<unknown>) => params.map(toSqlite);
      return {
        reader: stmt.columns().length > 0,
        all: (params) => stmt.all(...args(params)),
        run: (params) => {
          const r = stmt.run(...args(params));
          return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
        },
        iterate: (params) => stmt.iterate(...args(params)),
      };
    },
  };
  return { dialect: new SqliteDialect({ database }), raw };
}

function toSqlite(value: unknown): SQLInputValue {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  if (value === undefined) return null;
  return value as SQLInputValue;
}
