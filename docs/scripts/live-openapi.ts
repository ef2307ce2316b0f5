/**
 * Builds the real app in-process (fake engine, temp SQLite database, silent logger, no mail) and
 * returns its OpenAPI document as served at GET /openapi.json. Nothing listens on a port.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate } from '../../src/db/migrate.ts';
import { openDb } from '../../src/db/open.ts';
import { createFakeEngine } from '../../src/engines/fake/fake-engine.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createServices } from '../../src/services.ts';

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown> };
}

export async function fetchLiveOpenApi(): Promise<OpenApiDocument> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-docs-'));
  const db = await openDb(`file:${path.join(dir, 'docs.db')}`);
  const engine = createFakeEngine();
  try {
    await migrate(db);
    await engine.load();
    const services = createServices(db, engine, createLogger('silent'), {
      queueLimit: 1,
      requestTimeoutMs: 1000,
      usageFlushMs: 1000,
      keyCacheTtlMs: 0,
      maxKeysPerAccount: 3,
      maxBodyBytes: 1_048_576,
      siteOrigin: undefined,
      dataDir: dir,
      authSecret: 'docs-build-secret-docs-build-secret-0000',
      publicUrl: 'http://127.0.0.1:8080',
      mailer: { delivery: 'log', send: async () => {}, close: async () => {} },
    });
    try {
      const res = await services.app.request('/openapi.json');
      if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
      return (await res.json()) as OpenApiDocument;
    } finally {
      await services.close();
    }
  } finally {
    await engine.close();
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
