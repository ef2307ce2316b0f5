import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './env.ts';
import { registerConsoleStatic, registerDocsStatic } from './static.ts';

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

test('docs: clean URLs, folder redirects, the site 404 page, hashed inline scripts in the CSP', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-docs-'));
  try {
    fs.mkdirSync(path.join(root, 'guide'), { recursive: true });
    fs.mkdirSync(path.join(root, 'assets'), { recursive: true });
    fs.writeFileSync(
      path.join(root, 'index.html'),
      '<html><script>window.x=1</script><script src="/docs/assets/app.js"></script>home</html>',
    );
    fs.writeFileSync(path.join(root, 'guide', 'index.html'), '<html>guide index</html>');
    fs.writeFileSync(path.join(root, 'guide', 'quickstart.html'), '<html>quickstart</html>');
    fs.writeFileSync(path.join(root, '404.html'), '<html>not here</html>');
    fs.writeFileSync(path.join(root, 'assets', 'app.js'), 'void 0');
    const a = new OpenAPIHono<AppEnv>();
    registerDocsStatic(a, { dir: root });

    const bare = await a.request('/docs');
    assert.equal(bare.status, 308);
    assert.equal(bare.headers.get('location'), '/docs/');
    const home = await a.request('/docs/');
    assert.equal(home.status, 200);
    assert.match(await home.text(), /home/);
    const hash = (await import('node:crypto')).createHash('sha256').update('window.x=1').digest('base64');
    assert.ok(home.headers.get('content-security-policy')?.includes(`'sha256-${hash}'`));
    assert.ok(!home.headers.get('content-security-policy')?.includes("script-src 'self' 'unsafe-inline'"));
    assert.equal(await (await a.request('/docs/guide/quickstart')).text(), '<html>quickstart</html>');
    assert.equal(await (await a.request('/docs/guide/quickstart.html')).text(), '<html>quickstart</html>');
    const folder = await a.request('/docs/guide');
    assert.equal(folder.status, 308);
    assert.equal(folder.headers.get('location'), '/docs/guide/');
    assert.equal(await (await a.request('/docs/guide/')).text(), '<html>guide index</html>');
    const missing = await a.request('/docs/nope');
    assert.equal(missing.status, 404);
    assert.equal(await missing.text(), '<html>not here</html>');
    assert.equal((await a.request('/docs/assets/gone.js')).status, 404);
    assert.equal(
      (await a.request('/docs/assets/app.js')).headers.get('cache-control'),
      'public, max-age=31536000, immutable',
    );
    assert.equal((await a.request('/docs/..%2F..%2Fetc%2Fpasswd')).status, 404);
    const none = new OpenAPIHono<AppEnv>();
    registerDocsStatic(none, { dir: path.join(root, 'missing') });
    const unbuilt = await none.request('/docs/');
    assert.equal(unbuilt.status, 503);
    assert.match(await unbuilt.text(), /npm run build:docs/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
