import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';
import { tempSite } from '../../../test/fixtures/static-sites.ts';
import { createOpenApiApp } from '../../http/api.ts';
import { registerConsole } from './route.ts';

const site = tempSite('brier-console-', {});
after(() => site.remove());

test('without a build, /console answers a 503 page that says to run npm run build', async () => {
  const app = createOpenApiApp();
  registerConsole(app, { dir: path.join(site.dir, 'missing') });
  const res = await app.request('/console/keys');
  assert.equal(res.status, 503);
  assert.match(res.headers.get('content-type') ?? '', /text\/html/);
  assert.match(await res.text(), /npm run build/);
});
