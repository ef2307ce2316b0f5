import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './env.ts';
import { registerConsoleStatic } from './static.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-console-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function app(root: string) {
  const a = new OpenAPIHono<AppEnv>();
  registerConsoleStatic(a, { dir: root, basePath: '/console' });
  return a;
}

test('without a build, /console answers a 503 page that says to run npm run build', async () => {
  const res = await app(path.join(dir, 'missing')).request('/console/keys');
  assert.equal(res.status, 503);
  assert.match(res.headers.get('content-type') ?? '', /text\/html/);
  assert.match(await res.text(), /npm run build/);
});

test('serves files, immutable hashed assets, SPA fallback, 404 for missing assets, no traversal', async () => {
  fs.mkdirSync(path.join(dir, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>console</title>');
  fs.writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  fs.writeFileSync(path.join(dir, '..', 'brier-secret.txt'), 'secret');
  const a = app(dir);

  for (const url of ['/console', '/console/', '/console/keys', '/console/playground?x=1']) {
    const res = await a.request(url);
    assert.equal(res.status, 200, url);
    assert.equal(await res.text(), '<!doctype html><title>console</title>');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'/);
  }
  const js = await a.request('/console/assets/index-abc123.js');
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type') ?? '', /text\/javascript/);
  assert.match(js.headers.get('cache-control') ?? '', /immutable/);
  assert.equal((await a.request('/console/assets/gone-000.js')).status, 404);
  assert.equal((await a.request('/console/favicon.png')).status, 404);
  const up = await a.request('/console/..%2fbrier-secret.txt');
  assert.notEqual(await up.text(), 'secret');
  const head = await a.request('/console/keys', { method: 'HEAD' });
  assert.equal(head.status, 200);
  fs.rmSync(path.join(dir, '..', 'brier-secret.txt'));
});
