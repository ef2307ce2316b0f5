import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FixtureServer, FixtureServerOptions } from '../../test/fixtures/model-server.ts';
import { startFixtureServer } from '../../test/fixtures/model-server.ts';
import type { PullError, PullProgress } from './pull.ts';
import { isPullError, pullModel } from './pull.ts';

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'brier-pull-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

let dirCount = 0;
const freshDir = () => join(root, `d${dirCount++}`);

/** Runs `body` against a fresh fixture server and closes it afterwards. */
async function withServer(options: FixtureServerOptions, body: (server: FixtureServer) => Promise<void>) {
  const server = await startFixtureServer(options);
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

async function rejectsWith(promise: Promise<unknown>, code: PullError['code']): Promise<PullError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isPullError(error), `expected a PullError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected a ${code} rejection`);
}

describe('pullModel', () => {
  it('creates the models folder (and the data folder above it) readable by the owner only', async () => {
    await withServer({}, async (server) => {
      const destDir = join(freshDir(), 'data', 'models');
      await pullModel({ url: server.url, fileName: 'm.gguf', destDir });
      assert.equal((await stat(destDir)).mode & 0o777, 0o700);
      assert.equal((await stat(join(destDir, '..'))).mode & 0o777, 0o700);
    });
  });

  it('downloads the whole file, verifies size and sha256 and leaves no partial file', async () => {
    await withServer({}, async (server) => {
      const destDir = freshDir();
      const progress: PullProgress[] = [];
      const result = await pullModel({
        url: server.url,
        fileName: 'm.gguf',
        sizeBytes: server.content.length,
        sha256: server.sha256.toUpperCase(),
        destDir,
        onProgress: (p) => progress.push(p),
      });
      assert.equal(result.status, 'downloaded');
      assert.equal(result.path, join(destDir, 'm.gguf'));
      assert.equal(result.bytes, server.content.length);
      assert.equal(result.sha256, server.sha256);
      assert.deepEqual(result.verified, { size: true, sha256: true });
      assert.deepEqual(await readFile(result.path), server.content);
      assert.equal(existsSync(`${result.path}.partial`), false);
      assert.equal(existsSync(`${result.path}.partial.json`), false);
      assert.equal(server.requests.length, 1);
      assert.equal(server.requests[0]?.range, undefined);

      const downloads = progress.filter((p) => p.phase === 'download');
      assert.equal(downloads.at(-1)?.bytes, server.content.length);
      assert.equal(downloads.at(-1)?.totalBytes, server.content.length);
      for (let i = 1; i < downloads.length; i++) {
        assert.ok((downloads[i]?.bytes ?? 0) >= (downloads[i - 1]?.bytes ?? 0), 'download progress only grows');
      }
      assert.equal(progress.at(-1)?.phase, 'verify');
      assert.equal(progress.at(-1)?.bytes, server.content.length);
    });
  });

  it('takes the file name from the URL when none is given', async () => {
    await withServer({}, async (server) => {
      const result = await pullModel({ url: server.url, destDir: freshDir() });
      assert.match(result.path, /model\.gguf$/);
      assert.deepEqual(result.verified, { size: false, sha256: false });
      assert.equal(result.sha256, server.sha256, 'the sha256 is reported even when there is none to check');
    });
  });

  it('keeps the partial file when the connection drops, and the next pull resumes it with a Range request', async () => {
    await withServer({ cutAfter: 100_000 }, async (server) => {
      const destDir = freshDir();
      const options = { url: server.url, sha256: server.sha256, destDir, retries: 0 };
      const error = await rejectsWith(pullModel(options), 'INTERRUPTED');
      assert.equal(error.retryable, true);
      assert.match(error.message, /resume/);
      const partial = join(destDir, 'model.gguf.partial');
      const kept = (await stat(partial)).size;
      assert.ok(kept > 0 && kept < server.content.length, `partial has ${kept} bytes`);
      assert.equal(existsSync(join(destDir, 'model.gguf')), false);

      const result = await pullModel(options);
      assert.equal(result.status, 'resumed');
      assert.deepEqual(await readFile(result.path), server.content);
      assert.equal(server.requests.length, 2);
      assert.equal(server.requests[1]?.range, `bytes=${kept}-`);
      assert.equal(server.requests[1]?.ifRange, `"${server.sha256.slice(0, 16)}"`, 'resumes only the same file');
    });
  });

  it('retries a dropped connection by itself, resuming where it stopped', async () => {
    await withServer({ cutAfter: 50_000, cutTimes: 2 }, async (server) => {
      const retries: number[] = [];
      const result = await pullModel({
        url: server.url,
        sha256: server.sha256,
        destDir: freshDir(),
        retryDelayMs: 0,
        onRetry: (error, attempt) => {
          assert.equal(error.code, 'INTERRUPTED');
          retries.push(attempt);
        },
      });
      assert.equal(result.status, 'resumed');
      assert.deepEqual(retries, [1, 2]);
      assert.deepEqual(await readFile(result.path), server.content);
      assert.equal(server.requests.length, 3);
      assert.match(server.requests[2]?.range ?? '', /^bytes=\d+-$/);
    });
  });

  it('resumes a partial file left by an earlier run', async () => {
    await withServer({}, async (server) => {
      const destDir = freshDir();
      await mkdir(destDir, { recursive: true });
      await writeFile(join(destDir, 'model.gguf.partial'), server.content.subarray(0, 1000));
      const result = await pullModel({ url: server.url, sha256: server.sha256, destDir });
      assert.equal(result.status, 'resumed');
      assert.equal(server.requests.at(-1)?.range, 'bytes=1000-');
      assert.deepEqual(await readFile(result.path), server.content);
    });
  });

  it('starts over when the server ignores Range and sends the whole file with 200', async () => {
    await withServer({ ignoreRange: true }, async (server) => {
      const destDir = freshDir();
      await mkdir(destDir, { recursive: true });
      // wrong bytes: appending the 200 body to them would corrupt the file
      await writeFile(join(destDir, 'model.gguf.partial'), Buffer.alloc(5000, 1));
      const result = await pullModel({ url: server.url, sizeBytes: server.content.length, destDir });
      assert.equal(server.requests[0]?.range, 'bytes=5000-');
      assert.equal(result.status, 'downloaded');
      assert.deepEqual(await readFile(result.path), server.content);
    });
  });

  it('treats a 416 for a complete partial file as done and verifies it', async () => {
    await withServer({}, async (server) => {
      const destDir = freshDir();
      await mkdir(destDir, { recursive: true });
      await writeFile(join(destDir, 'model.gguf.partial'), server.content);
      const result = await pullModel({ url: server.url, sha256: server.sha256, destDir });
      assert.equal(server.requests[0]?.range, `bytes=${server.content.length}-`);
      assert.equal(result.status, 'resumed');
      assert.deepEqual(await readFile(result.path), server.content);
    });
  });

  it('fails a checksum mismatch naming both checksums, and deletes the partial file', async () => {
    await withServer({}, async (server) => {
      const destDir = freshDir();
      const wrong = 'ab'.repeat(32);
      const error = await rejectsWith(pullModel({ url: server.url, sha256: wrong, destDir }), 'CHECKSUM_MISMATCH');
      assert.match(error.message, new RegExp(`expected sha256 ${wrong}`));
      assert.match(error.message, new RegExp(`got ${server.sha256}`));
      assert.match(error.message, /partial download was deleted/);
      assert.equal(existsSync(join(destDir, 'model.gguf.partial')), false);
      assert.equal(existsSync(join(destDir, 'model.gguf')), false);
      assert.equal(error.retryable, false);
    });
  });

  it('fails a size mismatch the server announces before downloading anything', async () => {
    await withServer({}, async (server) => {
      const destDir = freshDir();
      const expected = server.content.length + 1;
      const error = await rejectsWith(pullModel({ url: server.url, sizeBytes: expected, destDir }), 'SIZE_MISMATCH');
      assert.match(error.message, new RegExp(`expected ${expected} bytes`));
      assert.match(error.message, new RegExp(`serves ${server.content.length}`));
      assert.equal(existsSync(join(destDir, 'model.gguf.partial')), false);
    });
  });

  it('stops and deletes a download that grows past the expected size (no Content-Length)', async () => {
    await withServer({ chunked: true, extraBytes: 10 }, async (server) => {
      const destDir = freshDir();
      const error = await rejectsWith(
        pullModel({ url: server.url, sizeBytes: server.content.length, destDir }),
        'SIZE_MISMATCH',
      );
      assert.match(error.message, /sent more/);
      assert.equal(existsSync(join(destDir, 'model.gguf.partial')), false);
    });
  });

  it('fails a short download (no Content-Length) against the expected size and deletes it', async () => {
    await withServer({ chunked: true }, async (server) => {
      const destDir = freshDir();
      const expected = server.content.length + 5;
      const error = await rejectsWith(pullModel({ url: server.url, sizeBytes: expected, destDir }), 'SIZE_MISMATCH');
      assert.match(error.message, new RegExp(`expected ${expected} bytes, got ${server.content.length}`));
      assert.equal(existsSync(join(destDir, 'model.gguf.partial')), false);
    });
  });

  it('does nothing when the final file is already there and verifies', async () => {
    await withServer({}, async (server) => {
      const destDir = freshDir();
      await pullModel({ url: server.url, destDir });
      const before = server.requests.length;
      const result = await pullModel({
        url: server.url,
        sha256: server.sha256,
        sizeBytes: server.content.length,
        destDir,
      });
      assert.equal(result.status, 'already-present');
      assert.equal(result.sha256, server.sha256);
      assert.deepEqual(result.verified, { size: true, sha256: true });
      assert.equal(server.requests.length, before, 'no request made');
    });
  });

  it('replaces a final file that fails verification, only after the new one verifies', async () => {
    await withServer({}, async (server) => {
      const destDir = freshDir();
      await mkdir(destDir, { recursive: true });
      await writeFile(join(destDir, 'model.gguf'), Buffer.alloc(server.content.length, 9));
      const result = await pullModel({ url: server.url, sha256: server.sha256, destDir });
      assert.equal(result.status, 'downloaded');
      assert.equal(result.replaced, true);
      assert.deepEqual(await readFile(result.path), server.content);
    });
  });

  it('fails an HTTP error with the status and URL, without retrying a 404', async () => {
    await withServer({}, async (server) => {
      const url = server.url.replace('model.gguf', 'missing.gguf');
      const error = await rejectsWith(pullModel({ url, destDir: freshDir(), retryDelayMs: 0 }), 'HTTP');
      assert.match(error.message, /HTTP 404/);
      assert.ok(error.message.includes(url));
      assert.equal(server.requests.length, 1);
    });
  });

  it('retries a 503 and gives up after the configured retries', async () => {
    await withServer({}, async (server) => {
      server.failWith(503);
      const error = await rejectsWith(
        pullModel({ url: server.url, destDir: freshDir(), retries: 2, retryDelayMs: 0 }),
        'HTTP',
      );
      assert.equal(error.retryable, true);
      assert.equal(server.requests.length, 3);
    });
  });

  it('keeps the partial file when aborted, with the signal reason', async () => {
    await withServer({ size: 4 * 1024 * 1024 }, async (server) => {
      const destDir = freshDir();
      const controller = new AbortController();
      const reason = new Error('stop');
      await assert.rejects(
        pullModel({
          url: server.url,
          destDir,
          signal: controller.signal,
          onProgress: (p) => {
            if (p.phase === 'download' && p.bytes > 0) controller.abort(reason);
          },
        }),
        (error) => error === reason,
      );
      assert.ok((await stat(join(destDir, 'model.gguf.partial'))).size > 0);
    });
  });

  it('rejects bad input before any request', async () => {
    await rejectsWith(pullModel({ destDir: freshDir() }), 'BAD_INPUT');
    await rejectsWith(pullModel({ url: 'ftp://example.com/a.gguf', destDir: freshDir() }), 'BAD_INPUT');
    await rejectsWith(
      pullModel({ url: 'http://127.0.0.1:9/a.gguf', sha256: 'not-hex', destDir: freshDir() }),
      'BAD_INPUT',
    );
  });
});
