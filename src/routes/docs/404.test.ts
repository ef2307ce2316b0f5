import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { DOCS_FILES, tempSite } from '../../../test/fixtures/static-sites.ts';
import { createOpenApiApp } from '../../http/api.ts';
import { registerDocs } from './route.ts';

const site = tempSite('brier-docs-', DOCS_FILES);
after(() => site.remove());

test("an unknown page is the site's 404 page; a missing asset and a path out of the site are 404s", async () => {
  const a = createOpenApiApp();
  registerDocs(a, { dir: site.dir });
  const missing = await a.request('/docs/nope');
  assert.equal(missing.status, 404);
  assert.equal(await missing.text(), '<html>not here</html>');
  assert.equal((await a.request('/docs/assets/gone.js')).status, 404);
  assert.equal((await a.request('/docs/..%2F..%2Fetc%2Fpasswd')).status, 404);
});
