import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';
import { tempSite } from '../../../test/fixtures/static-sites.ts';
import { createOpenApiApp } from '../../http/api.ts';
import { registerDocs } from './route.ts';

const site = tempSite('brier-docs-', {});
after(() => site.remove());

test('without a build, /docs answers a 503 page that says to run npm run build:docs', async () => {
  const none = createOpenApiApp();
  registerDocs(none, { dir: path.join(site.dir, 'missing') });
  const unbuilt = await none.request('/docs/');
  assert.equal(unbuilt.status, 503);
  assert.match(await unbuilt.text(), /npm run build:docs/);
});
