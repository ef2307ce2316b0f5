/**
 * Runs the fuzz requests against a server over real HTTP and checks every answer: no 5xx (a 503
 * only with retry-after), no connection error, no request left unanswered, every error body with a
 * message that names a field or a limit and a request id, every 200 answering each question asked.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { DecisionEngine } from '../../src/engines/engine.ts';
import { serverTimeouts } from '../../src/http/server-options.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createServices } from '../../src/services.ts';
import { captureMailer, freshDb, TEST_SERVICE_OPTIONS } from '../harness.ts';
import { type FuzzRequest, fuzzRequests } from './bodies.ts';

export interface FuzzTarget {
  url: string;
  key: string;
  cookie: string;
  close(): Promise<void>;
}

const ROOMY = { points: 1_000_000, durationS: 60 };

/** The real service graph on a fresh SQLite database, served on loopback, with a key and a signed-in session. */
export async function startFuzzTarget(engine: DecisionEngine): Promise<FuzzTarget> {
  // The socket first, so that the public URL (trusted origin, links in emails) is known.
  let app: ((req: Request, env: unknown) => Response | Promise<Response>) | undefined;
  const server = serve({
    fetch: (req, env) => (app ? app(req, env) : new Response('starting', { status: 503 })),
    port: 0,
    hostname: '127.0.0.1',
    serverOptions: serverTimeouts({ headersTimeoutMs: 10_000, bodyTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000 }),
  });
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const db = await freshDb('sqlite');
  try {
    await engine.load();
  } catch (error) {
    // Nothing may keep the test process alive after a failed start (an open server would hang it).
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await engine.close();
    await db.drop();
    throw error;
  }
  const { mailer, outbox } = captureMailer();
  const services = createServices(db, engine, createLogger('silent'), {
    ...TEST_SERVICE_OPTIONS,
    publicUrl: url,
    mailer,
    // Budgets out of the way, so that the handlers behind them are what gets fuzzed.
    authRateRules: Object.fromEntries(
      [
        '/sign-in/email',
        '/sign-up/email',
        '/send-verification-email',
        '/request-password-reset',
        '/reset-password',
      ].map((p) => [p, { what: p, ip: ROOMY, account: ROOMY }]),
    ),
  });
  app = services.app.fetch;

  const account = await services.accounts.ensure('fuzz-key@example.com');
  const { key } = await services.keys.create(account.id, 'fuzz');
  const email = 'fuzz-session@example.com';
  const password = 'correct-horse-battery';
  const json = { 'content-type': 'application/json', origin: url };
  await fetch(`${url}/control/v1/auth/sign-up/email`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email, password }),
  });
  const link = outbox.find((m) => m.to === email)?.link;
  if (!link) throw new Error('no verification link was sent');
  await fetch(link, { redirect: 'manual' });
  const signIn = await fetch(`${url}/control/v1/auth/sign-in/email`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email, password }),
  });
  const cookie = signIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  if (!cookie.includes('session_token')) throw new Error(`sign-in failed: ${signIn.status}`);

  return {
    url,
    key,
    cookie,
    async close() {
      if ('closeAllConnections' in server) server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await services.close();
      await engine.close();
      await db.drop();
    },
  };
}

export interface FuzzReport {
  requests: number;
  byStatus: Record<string, number>;
  /** One line per broken promise: the request and what was wrong. */
  failures: string[];
  seconds: number;
}

/** Fields and limits an error message may start by naming (control-plane fields and request parts). */
const NAMED =
  /^([\w$-]{1,128}(\.|\[|: )|(query|path|header) parameter [\w$-]{1,128}: |body |request body |state |model "|invalid email or password|too many |no such route|invalid or revoked API key|missing Authorization|malformed Authorization|cross-site|email not verified|\d+ of \d+ rows are invalid; nothing was stored: line \d+: )/;

async function send(target: FuzzTarget, request: FuzzRequest): Promise<string | Response> {
  const headers: Record<string, string> = { ...request.headers };
  if (request.auth === 'key') headers.authorization = `Bearer ${target.key}`;
  if (request.auth === 'session') {
    headers.cookie = target.cookie;
    headers.origin = target.url;
  }
  try {
    return await fetch(`${target.url}${request.path}`, {
      method: request.method,
      headers,
      body: request.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(20_000),
    });
  } catch (error) {
    const e = error as { name?: string; cause?: { code?: string } };
    return e.name === 'TimeoutError' ? 'unanswered after 20 s' : `connection error ${e.cause?.code ?? String(error)}`;
  }
}

/** What is wrong with one answer, or null. */
async function check(request: FuzzRequest, res: Response): Promise<string | null> {
  const text = await res.text();
  if (res.status >= 500 && !(res.status === 503 && res.headers.get('retry-after')))
    return `${res.status}: ${text.slice(0, 200)}`;
  if (res.status >= 400 && text.length > 64_000) return `${res.status} body of ${text.length} characters`;
  const isJson = (res.headers.get('content-type') ?? '').includes('application/json');
  // 431: Node's own refusal of headers past its 16 KiB limit, before any handler runs.
  if (res.status >= 400 && res.status !== 431 && !isJson) return `${res.status} without a JSON body`;
  if (!isJson) return null;
  let body: { message?: unknown; request_id?: unknown; answers?: Record<string, unknown> };
  try {
    body = JSON.parse(text);
  } catch {
    return `${res.status}: body is not JSON`;
  }
  if (res.status >= 400) {
    if (typeof body.message !== 'string' || body.message === '') return `${res.status} without a message`;
    if (typeof body.request_id !== 'string' || !/^req_[0-9a-f]{32}$/.test(body.request_id))
      return `${res.status} without a request_id`;
    if (res.headers.get('x-request-id') !== body.request_id)
      return `${res.status}: x-request-id differs from request_id`;
    if ([400, 413, 415, 422].includes(res.status) && !NAMED.test(body.message)) {
      return `${res.status} message names no field: ${body.message.slice(0, 160)}`;
    }
  }
  if (res.status === 200 && request.duplicateKeys) return '200 for a body that repeats a key (one value silently lost)';
  if (res.status === 200 && request.questionIds && body.answers) {
    const missing = request.questionIds.filter((id) => !Object.hasOwn(body.answers ?? {}, id));
    if (missing.length > 0) return `200 without answers for ${JSON.stringify(missing.slice(0, 3))}`;
  }
  return null;
}

/** Sends `count` requests from `seed`, `concurrency` at a time, and reports. Stops by itself. */
export async function runFuzz(target: FuzzTarget, seed: number, count: number, concurrency = 4): Promise<FuzzReport> {
  const started = performance.now();
  const byStatus: Record<string, number> = {};
  const failures: string[] = [];
  const requests = fuzzRequests(seed, count);
  let index = 0;
  async function worker(): Promise<void> {
    for (let next = requests.next(); !next.done; next = requests.next()) {
      const n = index++;
      const request = next.value;
      const res = await send(target, request);
      if (typeof res === 'string') {
        byStatus.error = (byStatus.error ?? 0) + 1;
        failures.push(`#${n} ${request.label}: ${res}`);
        continue;
      }
      byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
      const problem = await check(request, res);
      if (problem) failures.push(`#${n} ${request.label}: ${problem}`);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { requests: count, byStatus, failures, seconds: (performance.now() - started) / 1000 };
}
