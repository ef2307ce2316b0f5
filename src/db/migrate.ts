import { type MigrationProvider, Migrator, sql } from 'kysely';
import { migrations } from './migrations.ts';
import type { Db } from './open.ts';

/** Brings the schema up to date; run at boot. Throws with the failing migration's name. */
export async function migrate(db: Db): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(db.dialect) };
  // On PostgreSQL, name the schema: without it Kysely takes a migration table in ANY schema of the
  // database as ours (and fails with `relation "brier_migration_lock" does not exist`).
  const schema =
    db.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db: db.kysely,
    provider,
    migrationTableName: 'brier_migration',
    migrationLockTableName: 'brier_migration_lock',
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(
      `migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return (results ?? []).map((r) => r.migrationName);
}
