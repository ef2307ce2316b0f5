import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, test } from 'node:test';
import { DOCS_FILES, tempSite } from '../../../test/fixtures/static-sites.ts';
import { createOpenApiApp } from '../../http/api.ts';
import { registerDocs } from './route.ts';

const site = tempSite('brier-docs-', DOCS_FILES);
after(() => site.remove());

function app() {
  const a = createOpenApiApp();
  registerDocs(a, { dir: site.dir });
  return a;
}

test('the home page allows its inline scripts by hash in the CSP, never unsafe-inline', async () => {
  const home = await app().request('/docs/');
  assert.equal(home.status, 200);
  assert.match(await home.text(), /home/);
  const hash = createHash('sha256').update('window.x=1').digest('base64');
  assert.ok(home.headers.get('content-security-policy')?.includes(`'sha256-${hash}'`));
  assert.ok(!home.headers.get('content-security-policy')?.includes("script-src 'self' 'unsafe-inline'"));
});

test('clean URLs, .html URLs and folder indexes serve their page; assets are immutable', async () => {
  const a = app();
  assert.equal(await (await a.request('/docs/guide/quickstart')).text(), '<html>quickstart</html>');
  assert.equal(await (await a.request('/docs/guide/quickstart.html')).text(), '<html>quickstart</html>');
  assert.equal(await (await a.request('/docs/guide/')).text(), '<html>guide index</html>');
  assert.equal(
    (await a.request('/docs/assets/app.js')).headers.get('cache-control'),
    'public, max-age=31536000, immutable',
  );
});
