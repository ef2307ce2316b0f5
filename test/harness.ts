import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrate } from '../src/db/migrate.ts';
import { type Db, openDb } from '../src/db/open.ts';
import type { DecisionEngine } from '../src/engines/engine.ts';
import { createFakeEngine } from '../src/engines/fake/fake-engine.ts';
import type { Mailer, MailMessage } from '../src/mail/mailer.ts';
import { createLogger, type Logger } from '../src/observability/logger.ts';
import { createServices, type ServiceOptions } from '../src/services.ts';
import { createAppClient } from './fixtures/app-client.ts';

export type DbKind = 'sqlite' | 'postgres';

/** The databases a suite should run on: SQLite always, PostgreSQL when TEST_DATABASE_URL is set. */
export function databases(): DbKind[] {
  return process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

let warned = false;
/** Says once per process that the PostgreSQL runs were skipped. */
export function notePostgresSkip(): void {
  if (!process.env.TEST_DATABASE_URL && !warned) {
    warned = true;
    console.log('# skipped: PostgreSQL runs (set TEST_DATABASE_URL=postgres://... to include them)');
  }
}

/** A fresh database: a temp SQLite file, or a fresh schema in the test PostgreSQL. */
export async function freshDb(kind: DbKind): Promise<Db & { drop(): Promise<void> }> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-test-'));
    const db = await openDb(`file:${path.join(dir, 'test.db')}`);
    await migrate(db);
    return {
      ...db,
      drop: async () => {
        await db.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set');
  const own = await createPgDatabase(url, 'brier_t_');
  const db = await openDb(own.url);
  await migrate(db);
  return {
    ...db,
    drop: async () => {
      await db.close();
      await own.drop();
    },
  };
}

/**
 * A database of its own in the test PostgreSQL at `base` (not a schema: Kysely's migrator
 * introspects every table of the database, and another file dropping its schema mid-introspection
 * failed that, flaky), and how to drop it once its pools are closed.
 */
export async function createPgDatabase(base: string, prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const own = new URL(base);
  own.pathname = `/${name}`;
  return {
    url: own.href,
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      // Without FORCE: the pool's sockets may take a moment to close; never kill them under a test.
      for (let attempt = 0; attempt < 20; attempt++) {
        try {
          await client.query(`drop database if exists ${name}`);
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await client.end();
    },
  };
}

export interface TestAppOptions extends Partial<ServiceOptions> {
  db?: DbKind;
  /** A database opened (and migrated) by the test itself, instead of a fresh one of kind `db`; close() drops it. */
  database?: Db & { drop(): Promise<void> };
  engine?: DecisionEngine;
  /** Where the services log (default: silent). */
  logger?: Logger;
}

/** Service options for tests: small queue, fast usage flushes, a fixed auth secret. */
export const TEST_SERVICE_OPTIONS = {
  queueLimit: 16,
  requestTimeoutMs: 10_000,
  usageFlushMs: 50,
  keyCacheTtlMs: 1000,
  maxKeysPerAccount: 3,
  maxBodyBytes: 1_048_576,
  siteOrigin: undefined,
  authSecret: 'test-secret-test-secret-test-secret-0123',
  publicUrl: 'http://127.0.0.1',
} satisfies Partial<ServiceOptions>;

/** The real service graph on a fresh database with a deterministic engine; requests go through app.request(). */
export async function makeTestApp(options: TestAppOptions = {}) {
  const db = options.database ?? (await freshDb(options.db ?? 'sqlite'));
  const engine = options.engine ?? createFakeEngine();
  await engine.load();
  const logger = options.logger ?? createLogger('silent');
  const { mailer, outbox } = captureMailer();
  const services = createServices(db, engine, logger, { ...TEST_SERVICE_OPTIONS, mailer, ...options });
  const account = await services.accounts.ensure(`user-${randomBytes(4).toString('hex')}@example.com`);
  const created = await services.keys.create(account.id, 'test');

  /** app.request with the test key unless headers say otherwise; JSON bodies are serialised. */
  async function req(url: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { authorization: `Bearer ${created.key}`, ...init.headers };
    let body: string | undefined;
    if (init.body !== undefined) {
      body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    return services.app.request(url, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body });
  }

  async function close(): Promise<void> {
    await services.close();
    await engine.close();
    await db.drop();
  }
  return { ...services, db, engine, account, key: created.key, keyId: created.id, req, close, outbox };
}

/** A mailer that keeps what it sends, for tests that read verification and reset links. */
export function captureMailer(): { mailer: Mailer; outbox: MailMessage[] } {
  const outbox: MailMessage[] = [];
  return {
    outbox,
    mailer: {
      delivery: 'smtp',
      async send(message) {
        outbox.push(message);
      },
      async close() {},
    },
  };
}

export type TestApp = Awaited<ReturnType<typeof makeTestApp>>;

let clients = 0;

/**
 * A cookie-keeping client over `t.app.request` (test/fixtures/app-client.ts) signed in as a new,
 * verified user: it signs up, opens the emailed verification link and signs in, as a person does.
 * Each client comes from an address of its own, so that many of them stay under the sign-up limits.
 */
export async function signedInClient(t: TestApp, email = `user-${randomBytes(4).toString('hex')}@example.com`) {
  clients += 1;
  const client = createAppClient(t.app, `198.51.100.${clients % 250}`);
  const password = 'correct-horse-battery';
  assert.equal((await client.request('/control/v1/auth/sign-up/email', { body: { email, password } })).status, 200);
  const link = t.outbox.find((m) => m.to === email)?.link;
  assert.ok(link, 'a verification link was sent');
  await client.request(link);
  assert.equal((await client.request('/control/v1/auth/sign-in/email', { body: { email, password } })).status, 200);
  const user = await t.db.kysely.selectFrom('user').select('id').where('email', '=', email).executeTakeFirstOrThrow();
  return { ...client, email, password, userId: user.id };
}

export type SignedInClient = Awaited<ReturnType<typeof signedInClient>>;
