/**
 * Graceful shutdown of the real server process (`node src/main.ts`): SIGTERM or SIGINT lets in-flight
 * requests finish, writes every usage event, hands a running job back to the queue and logs "stopped",
 * with every engine kind as BRIER_MODEL and as a distillation job's teacher (issue 41: once a GGUF
 * teacher had answered, node-llama-cpp's signal-exit listener killed the process mid-drain). GGUF runs
 * use the tiny generated model everywhere and SmolLM2 from ../shared where present (skipped with a
 * message otherwise); each case is bounded by its waits.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDb } from '../../src/db/open.ts';
import { type CompletionsServer, startCompletionsServer } from '../fixtures/completions-server.ts';
import { SMOLLM2 } from '../fixtures/shared-models.ts';
import { jsonl, REFUND, tickets, waitFor } from '../fixtures/teach.ts';
import { startTeacherServer, type TeacherServer } from '../fixtures/teacher-server.ts';
import { writeTinyGguf } from '../fixtures/tiny-gguf.ts';
import { ROOT, startServer, waitHealthy } from '../server.ts';

const smolPresent = fs.existsSync(SMOLLM2);
if (!smolPresent) console.log(`# skipped: the SmolLM2 shutdown cases (${SMOLLM2} is absent)`);

/** One POST /v1/systemone of a noul question with `key`. */
function ask(url: string, key: string): Promise<Response> {
  return fetch(`${url}/v1/systemone`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ state: 'a ticket', questions: { q: { type: 'noul' } } }),
  });
}

interface Case {
  env: Record<string, string>;
  signal: 'SIGTERM' | 'SIGINT';
  /** A distillation job of this teacher runs (and has been answered once) when the signal comes. */
  teacher?: string;
}

/**
 * Starts the server with `c.env`, starts a distillation job of `c.teacher` and waits for the teacher's
 * first answer, makes 3 requests and a 4th in flight, sends the signal, and checks what the issue lists.
 */
async function drains(c: Case): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-shutdown-'));
  // A flush interval longer than the test: only the shutdown path can write the events.
  const server = await startServer({
    BRIER_DATA_DIR: dataDir,
    BRIER_USAGE_FLUSH_MS: '600000',
    BRIER_THREADS: '1',
    ...c.env,
  });
  try {
    await waitHealthy(server.url);
    const key = await server.createKey('shutdown@example.com');
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    let jobId: string | undefined;
    if (c.teacher) {
      // More states than the teacher answers before the signal: the job is still labelling then.
      const states = jsonl(tickets(600).map((x) => ({ state: x.state })));
      const up = await fetch(`${server.url}/control/v1/states`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/jsonl' },
        body: states,
      });
      assert.equal(up.status, 201, await up.text());
      const queued = await fetch(`${server.url}/control/v1/distillation-jobs`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ teacher: c.teacher, questions: { refund: REFUND }, concurrency: 1 }),
      });
      assert.equal(queued.status, 202, await queued.clone().text());
      jobId = (await queued.json()).id as string;
      await waitFor(
        async () => {
          const listed = (await (await fetch(`${server.url}/control/v1/teachers`, { headers })).json()).data;
          return listed.some((t: { id: string; calls: number }) => t.id === c.teacher && t.calls > 0);
        },
        120_000,
        'the teacher to answer once',
      );
    }
    const call = () => ask(server.url, key);
    for (let i = 0; i < 3; i++) assert.equal((await call()).status, 200);
    const inFlight = call();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(await server.kill(c.signal), 0, 'the process exits on its own, with 0');
    assert.equal((await inFlight).status, 200, 'the request in flight finished');
    const logs = server.logs.join('\n');
    assert.match(logs, /"msg":"shutting down: draining requests"/);
    assert.match(logs, /"msg":"stopped"/);
    const db = await openDb(`file:${path.join(dataDir, 'brier.db')}`);
    try {
      const served = await db.kysely
        .selectFrom('usage_event')
        .select('status')
        .where('route', '=', '/v1/systemone')
        .execute();
      assert.equal(served.length, 4, 'every request is in usage');
      if (jobId) {
        const job = await db.kysely
          .selectFrom('training_job')
          .select(['status', 'attempts', 'message'])
          .where('id', '=', jobId)
          .executeTakeFirstOrThrow();
        assert.deepEqual(
          { status: job.status, attempts: Number(job.attempts) },
          { status: 'queued', attempts: 0 },
          `handed back, not failed: ${job.message}`,
        );
        assert.match(logs, /training job handed back to the queue/);
      }
    } finally {
      await db.close();
    }
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

test('graceful shutdown: in-flight requests finish and every usage event is written', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-shutdown-'));
  const server = await startServer({
    BRIER_MODEL: 'fake:200',
    BRIER_DATA_DIR: dataDir,
    BRIER_USAGE_FLUSH_MS: '600000',
  });
  try {
    await waitHealthy(server.url);
    const key = await server.createKey('shutdown@example.com');
    const call = () => ask(server.url, key);
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

test('a second signal during the drain exits at once with 1', async () => {
  // Each answer takes 5 s: the drain is still waiting for the request in flight when the second signal comes.
  const server = await startServer({ BRIER_MODEL: 'fake:5000' });
  try {
    await waitHealthy(server.url);
    const key = await server.createKey('twice@example.com');
    const inFlight = ask(server.url, key).catch((error: unknown) => error);
    await new Promise((r) => setTimeout(r, 200));
    const exit = server.kill('SIGTERM');
    await waitFor(async () => server.logs.some((l) => l.includes('shutting down')), 5000, 'the drain to start');
    const began = Date.now();
    const code = await server.kill('SIGINT');
    await exit;
    assert.equal(code, 1);
    assert.ok(Date.now() - began < 3000, 'it did not wait for the request in flight');
    assert.ok(server.logs.some((l) => l.includes('second signal: exiting without waiting for the drain')));
    await inFlight;
  } finally {
    await server.stop();
  }
});

test('a signal listener a library adds later, one that exits, does not cut the drain short', async () => {
  const preload = path.join(ROOT, 'test', 'fixtures', 'exiting-signal-listener.ts');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-shutdown-'));
  const server = await startServer({
    BRIER_MODEL: 'fake:300',
    BRIER_DATA_DIR: dataDir,
    BRIER_USAGE_FLUSH_MS: '600000',
    NODE_OPTIONS: `--import=${preload}`,
  });
  try {
    await waitHealthy(server.url);
    const key = await server.createKey('library@example.com');
    const inFlight = ask(server.url, key);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await server.kill('SIGTERM'), 0, 'not the library exit code 3');
    assert.equal((await inFlight).status, 200);
    assert.ok(server.logs.some((l) => l.includes('"msg":"stopped"')));
    const db = await openDb(`file:${path.join(dataDir, 'brier.db')}`);
    const rows = await db.kysely.selectFrom('usage_event').select('id').execute();
    await db.close();
    assert.equal(rows.length, 1);
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

describe('graceful shutdown with every engine kind, as BRIER_MODEL and as a teacher that has answered', () => {
  let dir: string;
  let tiny: string;
  let systemOne: TeacherServer;
  let completions: CompletionsServer;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-shutdown-models-'));
    tiny = await writeTinyGguf(path.join(dir, 'tiny.gguf'), { contextLength: 1024 });
    // A slow System One teacher: the job is still labelling when the signal comes.
    systemOne = await startTeacherServer({ key: 'teacher-key', delayMs: 50 });
    completions = await startCompletionsServer({ modelPath: tiny });
    completions.setDelay(50);
  });
  after(async () => {
    await systemOne?.close();
    await completions?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const teachers = (model: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify([{ id: 'teacher', model, timeout_ms: 120_000, ...extra }]);

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`a GGUF teacher (tiny) that has answered: ${signal} drains, writes usage and hands the job back`, async () => {
      await drains({ env: { BRIER_MODEL: 'fake:200', BRIER_TEACHERS: teachers(tiny) }, signal, teacher: 'teacher' });
    });
  }

  test('a System One teacher that has answered: SIGTERM drains, writes usage and hands the job back', async () => {
    await drains({
      env: {
        BRIER_MODEL: 'fake:200',
        BRIER_TEACHERS: teachers(systemOne.url, { api_key_env: 'TEACHER_KEY' }),
        TEACHER_KEY: 'teacher-key',
      },
      signal: 'SIGTERM',
      teacher: 'teacher',
    });
  });

  test('an OpenAI-compatible teacher that has answered: SIGTERM drains, writes usage and hands the job back', async () => {
    await drains({
      env: { BRIER_MODEL: 'fake:200', BRIER_TEACHERS: teachers(`openai+${completions.url}`) },
      signal: 'SIGTERM',
      teacher: 'teacher',
    });
  });

  test('BRIER_MODEL a GGUF file (tiny): SIGTERM drains and writes usage', async () => {
    await drains({ env: { BRIER_MODEL: tiny }, signal: 'SIGTERM' });
  });

  test('BRIER_MODEL a System One server: SIGINT drains and writes usage', async () => {
    await drains({
      env: { BRIER_MODEL: systemOne.url, BRIER_UPSTREAM_API_KEY: 'teacher-key' },
      signal: 'SIGINT',
    });
  });

  describe('SmolLM2-135M-Instruct', { skip: smolPresent ? false : `${SMOLLM2} is absent` }, () => {
    test('as the teacher of the default embedded model: SIGTERM drains, writes usage and hands the job back', async () => {
      await drains({ env: { BRIER_TEACHERS: teachers(SMOLLM2) }, signal: 'SIGTERM', teacher: 'teacher' });
    });

    test('as BRIER_MODEL: SIGINT drains and writes usage', async () => {
      await drains({ env: { BRIER_MODEL: SMOLLM2 }, signal: 'SIGINT' });
    });
  });
});
