import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { CONSOLE_FILES, tempSite } from '../../../test/fixtures/static-sites.ts';
import { createOpenApiApp } from '../../http/api.ts';
import { registerConsole } from './route.ts';

const site = tempSite('brier-console-', CONSOLE_FILES);
after(() => site.remove());

test('a missing asset is a 404, never the page; no file outside the build is served', async () => {
  fs.writeFileSync(path.join(site.dir, '..', 'brier-secret.txt'), 'secret');
  try {
    const a = createOpenApiApp();
    registerConsole(a, { dir: site.dir });
    assert.equal((await a.request('/console/assets/gone-000.js')).status, 404);
    assert.equal((await a.request('/console/favicon.png')).status, 404);
    const up = await a.request('/console/..%2fbrier-secret.txt');
    assert.notEqual(await up.text(), 'secret');
  } finally {
    fs.rmSync(path.join(site.dir, '..', 'brier-secret.txt'));
  }
});
