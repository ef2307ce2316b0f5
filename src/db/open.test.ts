import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { migrate } from './migrate.ts';
import { openDb } from './open.ts';

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

let root: string;
let umask: number;
before(() => {
  // The usual umask: without the fix, SQLite would create 0644 files and mkdir 0755 folders.
  umask = process.umask(0o022);
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-open-'));
});
after(() => {
  process.umask(umask);
  fs.rmSync(root, { recursive: true, force: true });
});

test('a new SQLite database, its -wal and -shm files are 0600 and the folders created for it 0700', async () => {
  const dir = path.join(root, 'fresh', 'data');
  const file = path.join(dir, 'brier.db');
  const db = await openDb(`file:${file}`);
  try {
    await migrate(db);
    await sql`insert into usage_aggregate values ('2024-01-01', '/v1/systemone', 'm', 1, 0, 1, 1, 1, 0)`.execute(
      db.kysely,
    );
    // WAL mode: SQLite now holds the -wal and -shm files next to the database.
    for (const f of [file, `${file}-wal`, `${file}-shm`]) {
      assert.ok(fs.existsSync(f), `${path.basename(f)} exists`);
      assert.equal(modeOf(f).toString(8), '600', path.basename(f));
    }
    assert.equal(modeOf(dir).toString(8), '700');
    assert.equal(modeOf(path.dirname(dir)).toString(8), '700', 'every folder created for it');
  } finally {
    await db.close();
  }
});

test('existing database files readable by others are made 0600 at open, and the change is logged', async () => {
  const dir = path.join(root, 'existing');
  fs.mkdirSync(dir, { mode: 0o755 });
  const file = path.join(dir, 'brier.db');
  const first = await openDb(`file:${file}`);
  await migrate(first);
  await first.close();
  fs.chmodSync(file, 0o644);
  fs.writeFileSync(`${file}-wal`, '');
  fs.chmodSync(`${file}-wal`, 0o664);

  const warnings: unknown[] = [];
  const db = await openDb(`file:${file}`, { logger: { warn: (fields: unknown) => void warnings.push(fields) } });
  try {
    assert.equal(modeOf(file).toString(8), '600');
    assert.equal(modeOf(`${file}-wal`).toString(8), '600');
    assert.deepEqual(warnings, [
      { file, mode: '0644' },
      { file: `${file}-wal`, mode: '0664' },
    ]);
    assert.equal(modeOf(dir).toString(8), '755', 'a folder that already existed keeps its mode');
    assert.equal(await db.ping(), true);
  } finally {
    await db.close();
  }
});
