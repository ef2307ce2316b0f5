import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openDb } from '../../src/db/open.ts';
import { startServer, waitHealthy } from '../server.ts';

test('graceful shutdown: in-flight requests finish and every usage event is written', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-shutdown-'));
  // A flush interval longer than the test: only the shutdown path can write the events.
  const server = await startServer({
    BRIER_MODEL: 'fake:200',
    BRIER_DATA_DIR: dataDir,
    BRIER_USAGE_FLUSH_MS: '600000',
  });
  try {
    await waitHealthy(server.url);
    const key = await server.createKey('shutdown@example.com');
    const call = () =>
      fetch(`${server.url}/v1/systemone`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ state: 's', questions: { q: { type: 'noul' } } }),
      });
    for (let i = 0; i < 5; i++) assert.equal((await call()).status, 200);
    const inFlight = call();
    await new Promise((r) => setTimeout(r, 50));
    const code = await server.stop();
    assert.equal(code, 0);
    assert.equal((await inFlight).status, 200);
    const db = await openDb(`file:${path.join(dataDir, 'brier.db')}`);
    const rows = await db.kysely.selectFrom('usage_event').select(['status']).execute();
    await db.close();
    assert.equal(rows.length, 6);
    assert.ok(server.logs.some((l) => l.includes('"msg":"stopped"')));
    assert.ok(!server.logs.some((l) => l.includes(key)), 'the key never reaches the log');
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
