import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAppClient } from '../../../../test/fixtures/app-client.ts';
import { CONSOLE_FILES, tempSite } from '../../../../test/fixtures/static-sites.ts';
import { makeTestApp, type TestApp } from '../../../../test/harness.ts';
import { LINK_ALREADY_USED } from './route.ts';

describe('/control/v1/auth 302 (where a verification link lands)', () => {
  const site = tempSite('brier-console-', CONSOLE_FILES);
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ consoleDir: site.dir });
  });
  after(async () => {
    await t.close();
    site.remove();
  });
  const password = 'correct-horse-battery';
  const linkFor = (email: string) => t.outbox.filter((m) => m.to === email).at(-1)?.link ?? '';

  /** Opens a link as a browser does, and follows its redirect within this server. */
  async function open(client: ReturnType<typeof createAppClient>, link: string) {
    const res = await client.request(link, { headers: { accept: 'text/html' } });
    assert.equal(res.status, 302, `${link} answered ${res.status}`);
    const location = new URL(res.headers.get('location') ?? '', 'http://127.0.0.1');
    const landed = await client.request(`${location.pathname}${location.search}`, { headers: { accept: 'text/html' } });
    return { location, landed };
  }

  test('an API sign-up without callbackURL: the link signs in and lands on the console, not a 404', async () => {
    const client = createAppClient(t.app, '192.0.2.40');
    const signUp = await client.request('/control/v1/auth/sign-up/email', {
      body: { email: 'api@example.com', password },
    });
    assert.equal(signUp.status, 200);
    assert.match(linkFor('api@example.com'), /callbackURL=%2Fconsole%2Fverified/);
    const { location, landed } = await open(client, linkFor('api@example.com'));
    assert.equal(location.pathname, '/console/verified');
    assert.equal(landed.status, 200);
    assert.equal(await landed.text(), CONSOLE_FILES['index.html']);
    const session = await client.request('/control/v1/auth/get-session');
    assert.equal((await session.json())?.user?.email, 'api@example.com');
  });

  test('a new link asked for without callbackURL lands there too; a callbackURL given is kept', async () => {
    const client = createAppClient(t.app, '192.0.2.41');
    await client.request('/control/v1/auth/sign-up/email', {
      body: { email: 'kept@example.com', password, callbackURL: '/console/keys' },
    });
    assert.match(linkFor('kept@example.com'), /callbackURL=%2Fconsole%2Fkeys/);
    const again = await client.request('/control/v1/auth/send-verification-email', {
      body: { email: 'kept@example.com' },
    });
    assert.equal(again.status, 200);
    const { location, landed } = await open(client, linkFor('kept@example.com'));
    assert.equal(location.pathname, '/console/verified');
    assert.equal(landed.status, 200);
  });

  test('a used link opened again in a browser lands on the console page that says so; an API client still gets the 400', async () => {
    const client = createAppClient(t.app, '192.0.2.42');
    await client.request('/control/v1/auth/sign-up/email', { body: { email: 'twice@example.com', password } });
    const link = linkFor('twice@example.com');
    const first = await open(client, link);
    assert.equal(first.location.pathname, '/console/verified');
    assert.equal(first.location.searchParams.get('error'), null);
    const again = await open(client, link);
    assert.equal(`${again.location.pathname}${again.location.search}`, `/console/verified?error=${LINK_ALREADY_USED}`);
    assert.equal(again.landed.status, 200);
    assert.equal(await again.landed.text(), CONSOLE_FILES['index.html']);
    const api = await client.request(link, { headers: { accept: 'application/json' } });
    assert.equal(api.status, 400);
    assert.match((await api.json()).message, /already used/);
  });
});
