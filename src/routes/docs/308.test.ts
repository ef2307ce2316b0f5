import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { DOCS_FILES, tempSite } from '../../../test/fixtures/static-sites.ts';
import { createOpenApiApp } from '../../http/api.ts';
import { registerDocs } from './route.ts';

const site = tempSite('brier-docs-', DOCS_FILES);
after(() => site.remove());

test('/docs and folders redirect to their trailing slash', async () => {
  const a = createOpenApiApp();
  registerDocs(a, { dir: site.dir });
  const bare = await a.request('/docs');
  assert.equal(bare.status, 308);
  assert.equal(bare.headers.get('location'), '/docs/');
  const folder = await a.request('/docs/guide');
  assert.equal(folder.status, 308);
  assert.equal(folder.headers.get('location'), '/docs/guide/');
});
