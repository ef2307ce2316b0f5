import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import pg from 'pg';
import { notePostgresSkip } from '../../test/harness.ts';
import { migrate } from './migrate.ts';
import { migrations } from './migrations.ts';
import { openDb } from './open.ts';

notePostgresSkip();
const url = process.env.TEST_DATABASE_URL;

describe('migrations at boot', () => {
  test('replicas started together on one PostgreSQL database migrate it once (the migration lock serialises them)', {
    skip: url ? false : 'TEST_DATABASE_URL is not set',
  }, async () => {
    const name = `brier_mig_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const own = new URL(url ?? '');
    own.pathname = `/${name}`;
    // Six replicas, each with its own connection pool, as six processes would have.
    const replicas = await Promise.all(Array.from({ length: 6 }, () => openDb(own.href)));
    try {
      const applied = await Promise.all(replicas.map((db) => migrate(db)));
      const all = Object.keys(migrations('postgres'));
      // Exactly one replica applied every migration; the others found nothing left to do.
      assert.deepEqual(applied.map((a) => a.length).toSorted(), [0, 0, 0, 0, 0, all.length]);
      assert.deepEqual(
        applied.find((a) => a.length > 0),
        all,
      );
      const reader = new pg.Client({ connectionString: own.href });
      await reader.connect();
      const rows = await reader.query<{ name: string }>('select name from brier_migration order by name');
      await reader.end();
      assert.deepEqual(
        rows.rows.map((r) => r.name),
        all,
      );
    } finally {
      await Promise.all(replicas.map((db) => db.close()));
      await admin.query(`drop database if exists ${name}`);
      await admin.end();
    }
  });
});
