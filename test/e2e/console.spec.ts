import fs from 'node:fs';
import { type BrowserContext, expect, type Page, test } from '@playwright/test';
import type { ControlPlane } from '../fixtures/control-plane.ts';
import { linkIn } from '../fixtures/smtp-sink.ts';
import {
  type ConsoleServer,
  createKey,
  GGUF_CALIBRATION,
  SHOTS,
  showAsGguf,
  signInWithIdp as signInAs,
  startConsoleServer,
  TEACHER_KEY,
} from './console-fixture.ts';

/**
 * The built console (dist/console) served by the real service graph on loopback: SQLite, mail over
 * SMTP to a sink, OIDC against a real provider, the deterministic fake engine.
 */

const PASSWORD = 'correct horse battery';

let server: ConsoleServer;
let cp: ControlPlane;

test.beforeAll(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  server = await startConsoleServer();
  cp = server.cp;
});
test.afterAll(async () => {
  await server?.close();
});

/** Records the origin of every request the page makes. */
function recordOrigins(context: BrowserContext): Set<string> {
  const origins = new Set<string>();
  context.on('request', (req) => {
    const url = new URL(req.url());
    if (url.protocol === 'http:' || url.protocol === 'https:') origins.add(url.origin);
  });
  return origins;
}

async function signUpAndVerify(page: Page, email: string): Promise<string> {
  await page.goto(`${cp.url}/console`);
  await expect(page).toHaveURL(/\/console\/sign-in$/);
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page.getByRole('heading', { name: 'Check your email' })).toBeVisible();
  const mail = await cp.smtp.waitFor(email, /verify/i);
  const link = linkIn(mail);
  expect(link).toContain('callbackURL=');
  // The link signs the user in and lands on the console's keys, which say the email is verified.
  await page.goto(link);
  await expect(page).toHaveURL(/\/console\/keys$/);
  await expect(page.getByRole('heading', { name: 'API keys' })).toBeVisible();
  await expect(page.getByText('Your email is verified and you are signed in')).toBeVisible();
  await expect(page.getByText(email)).toBeVisible();
  return link;
}

const signInWithIdp = (page: Page, sub: string) => signInAs(page, cp, sub);

const callSystemOne = (key: string) =>
  fetch(`${cp.url}/v1/systemone`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ state: 'Where is my parcel?', questions: { late: { type: 'noul' } } }),
  });

test('onboarding: sign up, verify and land signed in, key, playground, curl-equivalent call, usage, model card, keys on a phone, revoke, limit, sign out', async ({
  page,
  context,
}) => {
  const origins = recordOrigins(context);
  const email = 'ada-e2e@example.com';

  // Errors sit next to their field.
  await page.goto(`${cp.url}/console/sign-up`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page.getByLabel('Password')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByText(/at least 10 characters \(this has 5\)/)).toBeVisible();

  const link = await signUpAndVerify(page, email);
  await page.screenshot({ path: `${SHOTS}/verified.png` });
  // Opened a second time (signed in), the link lands on the keys again, saying it was already used.
  await page.goto(link);
  await expect(page).toHaveURL(/\/console\/keys$/);
  await expect(page.getByText('This verification link was already used (a link works once)')).toBeVisible();

  // Unverified sign-in is explained elsewhere; here: the verification link signed the account in.
  await expect(page.getByText('No keys yet')).toBeVisible();
  // The console has its own icon, served from this origin.
  const icon = await page.locator('link[rel="icon"]').getAttribute('href');
  expect(icon).toBe('/console/favicon.svg');
  const iconRes = await page.request.get(`${cp.url}${icon}`);
  expect(iconRes.status()).toBe(200);
  expect(iconRes.headers()['content-type']).toBe('image/svg+xml');
  await page.screenshot({ path: `${SHOTS}/keys-empty.png`, fullPage: true });

  const key = await createKey(page, 'laptop');
  await page.screenshot({ path: `${SHOTS}/key-created-dialog.png` });
  await page.getByRole('button', { name: 'I have copied it' }).click();
  await expect(page.getByRole('cell', { name: 'laptop', exact: true })).toBeVisible();
  await expect(page.getByRole('row', { name: /laptop/ }).getByText('never')).toBeVisible();

  // Reload: still signed in, no sign-in form shown on the way.
  await page.reload();
  await expect(page.getByRole('heading', { name: 'API keys' })).toBeVisible();
  await expect(page.getByLabel('Password')).toHaveCount(0);

  // Playground: the example runs with the session.
  await page.getByRole('link', { name: 'Playground' }).click();
  await expect(page.getByRole('heading', { name: 'Playground' })).toBeVisible();
  await page.getByRole('button', { name: 'Run' }).click();
  const answers = page.getByRole('region', { name: 'Answers' });
  await expect(answers.getByRole('article', { name: 'Answer to refund' })).toBeVisible();
  await expect(answers.getByRole('article', { name: 'Answer to team' }).getByText('chosen')).toBeVisible();
  await expect(answers.getByRole('article', { name: 'Answer to urgency' })).toContainText('Expected score');
  await expect(page.getByTestId('run-meta')).toContainText(/input\s+tokens/);
  await page.screenshot({ path: `${SHOTS}/playground.png`, fullPage: true });

  // The curl snippet, run as the equivalent fetch with the new key.
  const curl = (await page.getByTestId('snippet-curl').textContent()) ?? '';
  expect(curl).toContain(`${cp.url}/v1/systemone`);
  const body = JSON.parse(/-d '(.*)'$/s.exec(curl)?.[1] ?? 'null');
  const res = await fetch(`${cp.url}/v1/systemone`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  expect(Object.keys((await res.json()).answers)).toEqual(['refund', 'team', 'urgency']);
  await page.getByRole('tab', { name: 'TypeScript' }).click();
  await expect(page.getByTestId('snippet-typescript')).toContainText('@typesafe-ai/sdk');

  // Share by URL: a fresh tab opens the same playground.
  await page.getByLabel('Instructions').first().fill('Does the customer want a refund?');
  await page.getByRole('button', { name: 'Share link' }).click();
  await expect(page).toHaveURL(/#q=/);
  const shared = page.url();
  const other = await context.newPage();
  await other.goto(shared);
  await expect(other.getByLabel('Instructions').first()).toHaveValue('Does the customer want a refund?');
  await other.close();

  // Phone width.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${SHOTS}/playground-phone.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });

  // Usage: the playground run and the key's call are both counted.
  await page.getByRole('link', { name: 'Usage' }).click();
  await expect(page.getByTestId('total-requests')).toHaveText('2');
  await expect(page.getByRole('img', { name: /Requests per day/ })).toBeVisible();
  await expect(page.getByRole('row', { name: /laptop/ })).toContainText('1');
  // The day table lists the one day with traffic, not a row of zeros per day of the window.
  await expect(page.getByRole('row', { name: /\d{4}-\d\d-\d\d/ })).toHaveCount(1);
  await expect(page.getByRole('table', { name: /Days with traffic/ })).toContainText('1 of the last 30 days');
  await page.getByLabel('Window', { exact: true }).selectOption('7');
  await expect(page.getByRole('table', { name: /Days with traffic/ })).toContainText('1 of the last 7 days');
  await expect(page.getByRole('row', { name: /\d{4}-\d\d-\d\d/ })).toHaveCount(1);
  await page.screenshot({ path: `${SHOTS}/usage.png`, fullPage: true });

  // Model page.
  await page.getByRole('link', { name: 'Model' }).click();
  await expect(page.getByTestId('model-id')).toHaveText(cp.services.systemOne.resolveModel(undefined));
  // The model card is rendered, not shown as Markdown source: code spans, tables, no stray backticks.
  await expect(page.getByTestId('card-title').locator('code')).toHaveText('brier-latest');
  await page.getByText('The full model card').click();
  const card = page.getByTestId('model-card');
  await expect(card.getByRole('heading', { name: 'What it cannot do (read this before relying on it)' })).toBeVisible();
  expect(await card.getByRole('table').count()).toBeGreaterThanOrEqual(5);
  await expect(card.locator('code', { hasText: /^unseen$/ }).first()).toBeVisible();
  expect(await page.getByRole('main').textContent()).not.toContain('`');
  await page.screenshot({ path: `${SHOTS}/model.png`, fullPage: true });

  // The key limit, then revoke with confirmation.
  await page.getByRole('link', { name: 'Keys' }).click();
  await createKey(page, 'ci');
  await page.getByRole('button', { name: 'I have copied it' }).click();
  await createKey(page, 'staging');
  await page.getByRole('button', { name: 'I have copied it' }).click();
  await expect(page.getByText(/3 active keys, the limit per account/)).toBeVisible();
  await expect(page.getByLabel('Key name')).toHaveCount(0);
  await page.screenshot({ path: `${SHOTS}/keys-limit.png`, fullPage: true });

  // On a phone (375 px) every Revoke button is on screen, with no sideways scrolling.
  await page.setViewportSize({ width: 375, height: 812 });
  const revokes = page.getByRole('button', { name: /^Revoke key / });
  await expect(revokes).toHaveCount(3);
  await expect(revokes.first()).toBeInViewport({ ratio: 1 });
  for (const box of await revokes.evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON()))) {
    expect(box.left).toBeGreaterThanOrEqual(0);
    expect(box.right).toBeLessThanOrEqual(375);
  }
  const overflow = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    table: [...document.querySelectorAll('.table-wrap')].map((t) => t.scrollWidth - t.clientWidth),
  }));
  expect(overflow).toEqual({ page: 375, table: [0] });
  await page.screenshot({ path: `${SHOTS}/keys-phone.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });

  await page.getByRole('button', { name: 'Revoke key laptop' }).click();
  const confirm = page.getByRole('dialog', { name: 'Revoke this key?' });
  await expect(confirm).toBeVisible();
  await confirm.getByRole('button', { name: 'Revoke key' }).click();
  await expect(page.getByText(/is revoked/)).toBeVisible();
  await expect(page.getByRole('cell', { name: 'laptop', exact: true })).toHaveCount(0);
  expect((await callSystemOne(key)).status).toBe(401);
  await expect(page.getByLabel('Key name')).toBeVisible();

  // Sign out.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/console\/sign-in$/);
  await page.goto(`${cp.url}/console/keys`);
  await expect(page).toHaveURL(/\/console\/sign-in$/);
  await page.screenshot({ path: `${SHOTS}/sign-in.png` });

  expect([...origins]).toEqual([cp.url]);
});

test('resend verification, unverified sign-in explained, password reset through the console', async ({
  page,
  context,
}) => {
  const origins = recordOrigins(context);
  const email = 'reset-e2e@example.com';
  await page.goto(`${cp.url}/console/sign-up`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('button', { name: 'Resend the email' }).click();
  await expect(page.getByText(/a new link is on its way/)).toBeVisible();
  // This server sends mail by SMTP: nothing about a server log.
  await expect(page.getByTestId('link-in-log')).toHaveCount(0);
  await page.screenshot({ path: `${SHOTS}/check-email.png` });

  await page.goto(`${cp.url}/console/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(page.getByText(/not verified yet/)).toBeVisible();

  const link = linkIn(await cp.smtp.waitFor(email, /verify/i, 10_000, 1));
  await page.goto(link);
  await expect(page.getByRole('heading', { name: 'API keys' })).toBeVisible();
  await expect(page.getByText('Your email is verified and you are signed in')).toBeVisible();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/console\/sign-in$/);
  // Opened a second time (signed out): the console's page says so, not a raw JSON error.
  await page.goto(link);
  await expect(page).toHaveURL(/\/console\/verified\?error=LINK_ALREADY_USED$/);
  await expect(page.getByRole('heading', { name: 'This link was already used' })).toBeVisible();
  await expect(page.getByText('your email is verified: a link works once')).toBeVisible();
  await page.screenshot({ path: `${SHOTS}/link-used.png` });

  await page.goto(`${cp.url}/console/forgot-password`);
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Send the reset link' }).click();
  await expect(page.getByText(/we sent it a link/)).toBeVisible();
  await page.goto(linkIn(await cp.smtp.waitFor(email, /reset/i)));
  await expect(page).toHaveURL(/\/console\/reset-password\?token=/);
  await page.getByLabel('New password').fill('a brand new passphrase');
  await page.getByRole('button', { name: 'Save the new password' }).click();
  await expect(page.getByText(/password is changed/)).toBeVisible();

  await page.goto(`${cp.url}/console/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('a brand new passphrase');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'API keys' })).toBeVisible();

  expect([...origins]).toEqual([cp.url]);
});

test('without SMTP, the check-email and reset pages say the link is in the server log, not the inbox', async ({
  page,
}) => {
  // As GET /control/v1/auth-providers answers on a server without SMTP_URL (its route test checks that).
  await page.route('**/control/v1/auth-providers', (route) =>
    route.fulfill({ json: { email_password: true, providers: [], mail_delivery: 'log' } }),
  );
  await page.goto(`${cp.url}/console/check-email?email=${encodeURIComponent('nosmtp@example.com')}`);
  const told = page.getByTestId('link-in-log');
  await expect(told).toContainText(
    "the link is not in your inbox but in the server's log, on a line mail (log mailer)",
  );
  await expect(told.locator('code')).toHaveText(['SMTP_URL', 'mail (log mailer)', 'mailLink']);
  await page.screenshot({ path: `${SHOTS}/check-email-no-smtp.png` });
  await page.goto(`${cp.url}/console/forgot-password`);
  await page.getByLabel('Email').fill('nosmtp@example.com');
  await page.getByRole('button', { name: 'Send the reset link' }).click();
  await expect(page.getByText(/we sent it a link/)).toBeVisible();
  await expect(page.getByTestId('link-in-log')).toBeVisible();
});

test('a custom GGUF model page: its calibration status has no literal backticks; the report marks a set worse than uniform', async ({
  page,
}) => {
  await signInWithIdp(page, 'gguf-e2e');
  await showAsGguf(page, GGUF_CALIBRATION.shrink);
  await page.getByRole('link', { name: 'Model', exact: true }).click();
  const status = page.getByTestId('calibration-status');
  await expect(status).toContainText('Not calibrated: every answer is mixed half and half with the uniform answer.');
  await expect(status.locator('code')).toHaveText('npm run brier -- models calibrate');
  await expect(page.getByText("This server's model ships no model card.")).toBeVisible();
  expect(await page.getByRole('main').textContent()).not.toContain('`');

  await page.unrouteAll();
  await showAsGguf(page, GGUF_CALIBRATION.fitted);
  await page.reload();
  await expect(page.getByTestId('calibration-status')).toContainText(
    'Calibrated per question type on 360 labelled rows',
  );
  const report = page.getByTestId('calibration-report');
  await expect(report.getByRole('row')).toHaveCount(5);
  await expect(report.locator('tr.worse')).toHaveCount(1);
  await expect(report.locator('tr.worse')).toContainText('boolq');
  expect(await page.getByRole('main').textContent()).not.toContain('`');
  await page.screenshot({ path: `${SHOTS}/model-gguf.png`, fullPage: true });
});

test('third-party sign-in: the configured provider button lands in the console', async ({ page }) => {
  cp.idp.signInAs({ sub: 'grace-e2e', email: 'grace-e2e@example.com', email_verified: true, name: 'Grace' });
  await page.goto(`${cp.url}/console/sign-in`);
  await page.getByRole('button', { name: 'Sign in with Test IdP' }).click();
  await expect(page.getByRole('heading', { name: 'API keys' })).toBeVisible();
  await expect(page.getByText('grace-e2e@example.com')).toBeVisible();
});

test('docs: the site is served at /docs from this origin only, and links to the console', async ({ page, context }) => {
  const origins = recordOrigins(context);
  await page.goto(`${cp.url}/docs/`);
  await expect(page.getByRole('heading', { level: 1 }).first()).toBeVisible();
  const icon = await page.locator('link[rel="icon"]').getAttribute('href');
  expect(icon).toBe('/docs/favicon.svg');
  const iconRes = await page.request.get(`${cp.url}${icon}`);
  expect(iconRes.status()).toBe(200);
  expect(iconRes.headers()['content-type']).toBe('image/svg+xml');
  await page.screenshot({ path: `${SHOTS}/docs-home.png`, fullPage: true });
  await page.goto(`${cp.url}/docs/guide/quickstart`);
  await expect(page.getByRole('heading', { level: 1 }).first()).toBeVisible();
  await page.screenshot({ path: `${SHOTS}/docs-quickstart.png`, fullPage: true });
  await page.locator('a[href="/console"], a[href="/console/"]').first().click();
  await expect(page).toHaveURL(/\/console(\/|$)/);
  await expect(page.getByRole('heading', { name: /sign in/i }).first()).toBeVisible();
  expect([...origins]).toEqual([cp.url]);
});

test('playground: an abstained answer says "no information", a tied one "no preference", and neither badges an option', async ({
  page,
}) => {
  await signInWithIdp(page, 'tie-e2e');
  await page.getByRole('link', { name: 'Playground', exact: true }).click();
  // With the deterministic fake engine this state answers refund 0.52 (abstained: within 0.02 of uniform) and
  // team billing 0.45, tech 0.45, other 0.10 (tied at 2 decimals, not uniform).
  await page.getByRole('button', { name: 'JSON' }).click();
  await page.getByLabel('Request body (JSON)').fill(
    JSON.stringify({
      state: 'Tie 9351: I was charged twice.',
      questions: {
        refund: { type: 'noul', instructions: 'Is the customer asking for money back?' },
        team: {
          type: 'choice',
          instructions: 'Which team should handle this?',
          criteria: { billing: 'charges and refunds', tech: 'bugs and outages', other: null },
        },
      },
    }),
  );
  await page.getByRole('button', { name: 'Run' }).click();
  const answers = page.getByRole('region', { name: 'Answers' });
  const refund = answers.getByRole('article', { name: 'Answer to refund' });
  const team = answers.getByRole('article', { name: 'Answer to team' });
  await expect(refund.getByTestId('no-information')).toContainText('no information');
  await expect(refund.getByTestId('no-information')).toContainText('the model abstained on this question');
  await expect(team.getByTestId('no-preference')).toContainText('billing and tech are tied at 0.45');
  await expect(team).toContainText('No clear choice');
  await expect(refund.getByText('chosen', { exact: true })).toHaveCount(0);
  await expect(team.getByText('chosen', { exact: true })).toHaveCount(0);
  await page.screenshot({ path: `${SHOTS}/playground-tie.png`, fullPage: true });
});

test('playground: a body the server refuses (422) lists each problem at its field', async ({ page }) => {
  await signInWithIdp(page, 'invalid-e2e');
  await page.getByRole('link', { name: 'Playground', exact: true }).click();
  await page.getByRole('button', { name: 'JSON' }).click();
  const id = 'q'.repeat(129);
  await page.getByLabel('Request body (JSON)').fill(
    JSON.stringify({
      state: 'I was charged twice.',
      questions: {
        team: {
          type: 'choice',
          instructions: 'Which queue?',
          criteria: Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`queue ${i}`, null])),
        },
        [id]: { type: 'noul', instructions: 'Refund?' },
      },
    }),
  );
  await page.getByRole('button', { name: 'Run' }).click();
  const issues = page.getByTestId('run-issues');
  await expect(issues.getByRole('listitem')).toHaveCount(2);
  await expect(issues).toContainText('questions.team.criteria: choice needs 2 to 255 labels, got 256');
  await expect(issues).toContainText('a question id has at most 128 characters (the limit)');
  await expect(page.getByRole('region', { name: 'Answers' })).toHaveCount(0);
  await page.screenshot({ path: `${SHOTS}/playground-invalid.png`, fullPage: true });
});

test('usage: a new account sees "no traffic in the last 30 days" instead of a table of zeros', async ({ page }) => {
  await signInWithIdp(page, 'quiet-e2e');
  await page.getByRole('link', { name: 'Usage', exact: true }).click();
  await expect(page.getByTestId('total-requests')).toHaveText('0');
  await expect(page.getByTestId('no-traffic')).toContainText('No traffic in the last 30 days');
  await expect(page.getByRole('row', { name: /\d{4}-\d\d-\d\d/ })).toHaveCount(0);
  await expect(page.getByRole('img', { name: /Requests per day/ })).toHaveCount(0);
});

test('teach your task: upload JSONL and CSV (a bad row named), train with a progress bar, held-out metrics and reliability diagram, serve the adapter, delete it', async ({
  page,
}) => {
  await signInWithIdp(page, 'teach-e2e');
  const key = await createKey(page, 'teach');
  await page.getByRole('button', { name: 'I have copied it' }).click();
  await page.getByRole('link', { name: 'Adapters', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Teach your task' })).toBeVisible();
  await expect(page.getByText('No labelled examples yet.')).toBeVisible();

  // JSON Lines: 45 tickets of one routing question.
  const routing = {
    type: 'choice',
    instructions: 'Which team should handle this ticket?',
    criteria: { billing: 'charges and refunds', tech: 'bugs and outages', other: null },
  };
  const phrases: Record<string, string[]> = {
    billing: ['I was charged twice', 'refund my last payment', 'my invoice is wrong'],
    tech: ['the app crashes on start', 'login page shows an error', 'the site is down again'],
    other: ['do you have a shop in Paris', 'who founded the company', 'where is your office'],
  };
  const lines = Array.from({ length: 45 }, (_, i) => {
    const team = ['billing', 'tech', 'other'][i % 3] ?? 'other';
    const state = `${phrases[team]?.[i % 3]} (ticket ${i})`;
    return JSON.stringify({ state, questions: { team: routing }, labels: { team } });
  });
  const file = page.getByLabel('Examples file');
  await file.setInputFiles({
    name: 'tickets.jsonl',
    mimeType: 'application/jsonl',
    buffer: Buffer.from(lines.join('\n')),
  });
  await page.getByRole('button', { name: 'Upload examples' }).click();
  await expect(page.getByText('Stored 45 labelled questions from 45 rows')).toBeVisible();
  await expect(page.getByRole('row', { name: /Which team should handle this ticket\?.*45/ })).toBeVisible();

  // CSV: the question comes from the form; a bad label is named by its data row and nothing is stored.
  await file.setInputFiles({
    name: 'spam.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from('state,label\n"Win a prize, click now",yes\nMeeting at 3,maybe\n'),
  });
  await page.getByLabel('Question type').selectOption('noul');
  await page.getByLabel('Instructions').fill('Is this message spam?');
  await page.getByRole('button', { name: 'Upload examples' }).click();
  await expect(page.getByRole('alert')).toContainText('1 of 2 rows are invalid; nothing was stored');
  // in the CSV's terms: its data row and its "label" column, never the question id the console chose
  await expect(page.getByRole('alert')).toContainText('data row 2: the "label" column: must be true or false');
  await expect(page.getByRole('alert')).not.toContainText('labels.q');
  await page.screenshot({ path: `${SHOTS}/teach-upload-error.png`, fullPage: true });
  await file.setInputFiles({
    name: 'spam.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from('state,label\n"Win a prize, click now",yes\nMeeting at 3,no\n'),
  });
  await page.getByRole('button', { name: 'Upload examples' }).click();
  await expect(page.getByText('Stored 2 labelled questions from 2 rows')).toBeVisible();
  await expect(page.getByRole('row', { name: /Is this message spam\?/ })).toBeVisible();

  // Training: the job shows a progress bar, and ends with the adapter's held-out report. A second job
  // waits behind it, says where it stands, and is cancelled from its row.
  await page.getByRole('button', { name: 'Train an adapter' }).click();
  await expect(page.getByRole('progressbar').first()).toBeVisible();
  const bar = page.getByRole('progressbar', {
    name: (await page.getByRole('progressbar').first().getAttribute('aria-label')) ?? '',
  });
  await expect(bar).toHaveAttribute('aria-valuenow', '0');
  await expect(page.getByText('next in the queue')).toBeVisible();
  await page.getByRole('button', { name: 'Train an adapter' }).click();
  await expect(page.getByText('2nd in the queue')).toBeVisible();
  const second = page.getByRole('listitem').filter({ hasText: '2nd in the queue' });
  await second.getByRole('button', { name: 'Cancel job' }).click();
  await expect(page.getByText(/Training job job_\w+ is cancelled\./)).toBeVisible();
  await expect(page.getByText('cancelled', { exact: true })).toBeVisible();
  cp.services.runner.start();
  try {
    await expect(bar).toHaveAttribute('aria-valuenow', '100', { timeout: 30_000 });
  } finally {
    await cp.services.runner.stop();
  }
  await expect(page.getByText(/succeeded/).first()).toBeVisible();
  const adapter = page.getByRole('article', { name: /^Adapter ft:/ });
  await expect(adapter).toBeVisible();
  await expect(adapter.getByText('served', { exact: true })).toBeVisible();
  // the head fitted, by the candidate's name
  await expect(
    adapter.getByText(
      / examples, (calibration|probe( \+ label prior)? \(L2 [\d.e-]+\)|shrinkage LDA \(gamma [\d.]+\)): served/,
    ),
  ).toBeVisible();
  await expect(adapter.getByRole('row', { name: /^Adapter / })).toBeVisible();
  await expect(
    adapter.getByRole('img', { name: /Reliability on 45 examples, each answered by a fit that never saw it/ }),
  ).toBeVisible();
  await page.screenshot({ path: `${SHOTS}/teach-adapter.png`, fullPage: true });
  const adapterId = ((await adapter.getByRole('code').first().textContent()) ?? '').trim();
  expect(adapterId).toMatch(/^ft:brier-fake-3\.0\.0:[0-9a-f]{12}$/);

  // The adapter answers its template through the API, and says so.
  const ask = () =>
    fetch(`${cp.url}/v1/systemone`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: adapterId, state: 'refund my last payment', questions: { team: routing } }),
    });
  const served = await ask();
  expect(served.status).toBe(200);
  expect((await served.json()).answers.team.x_answered_by).toBe(adapterId);

  // The playground offers it, keeps it in JSON mode and in "call it from code", and answers with it.
  await page.getByRole('link', { name: 'Playground', exact: true }).click();
  await page.getByLabel('Model').selectOption(adapterId);
  await expect(page.getByTestId('snippet-curl')).toContainText(`"model":"${adapterId}"`);
  await page.getByRole('button', { name: 'JSON' }).click();
  await expect(page.getByLabel('Request body (JSON)')).toHaveValue(new RegExp(`"model": "${adapterId}"`));
  await page.getByRole('button', { name: 'Form' }).click();
  await expect(page.getByLabel('Model')).toHaveValue(adapterId);
  await page.getByRole('link', { name: 'Adapters', exact: true }).click();

  // Deleting it stops it at once.
  await adapter.getByRole('button', { name: 'Delete adapter' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete this adapter?' });
  await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
  await expect(page.getByText(`Adapter ${adapterId} is deleted`)).toBeVisible();
  await expect(page.getByText('No adapters yet.')).toBeVisible();
  expect((await ask()).status).toBe(400);
});

test('calibration you can see: outcomes of live answers charted by week, drift said out loud, and a retrain offered', async ({
  page,
}) => {
  await signInWithIdp(page, 'drift-e2e');
  const key = await createKey(page, 'drift');
  await page.getByRole('button', { name: 'I have copied it' }).click();
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const put = await fetch(`${cp.url}/control/v1/retention`, {
    method: 'PUT',
    headers,
    body: JSON.stringify({ days: 7 }),
  });
  expect(put.status).toBe(200);
  const routing = {
    type: 'choice',
    instructions: 'Which team should handle this ticket?',
    criteria: { billing: 'charges and refunds', tech: 'bugs and outages', other: null },
  };
  // 40 live answers whose outcome is always the label the model found least likely: badly calibrated.
  for (let i = 0; i < 40; i++) {
    const res = await fetch(`${cp.url}/v1/systemone`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ state: `drift ticket ${i}`, questions: { team: routing } }),
    });
    const probs = (await res.json()).answers.team.probabilities as Record<string, number>;
    const least = Object.entries(probs).sort((a, b) => a[1] - b[1])[0]?.[0];
    const outcome = await fetch(`${cp.url}/control/v1/outcomes`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ request_id: res.headers.get('x-request-id'), question_id: 'team', label: least }),
    });
    expect(outcome.status).toBe(201);
  }
  await page.getByRole('link', { name: 'Adapters', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Calibration of live answers' })).toBeVisible();
  const card = page.getByRole('region', { name: 'Calibration of Which team should handle this ticket?' });
  await expect(card.getByRole('img', { name: /Brier and ECE of live answers by week/ })).toBeVisible();
  await expect(card.getByRole('img', { name: /Reliability of live answers/ })).toBeVisible();
  await expect(card.getByRole('alert')).toContainText('Calibration has drifted: the last 40 outcomes have ECE');
  await expect(page.getByText(/Requests of 1 key are kept \(40 now\)/)).toBeVisible();
  await expect(card).toContainText('40 outcomes: accuracy 0.000');
  await page.screenshot({ path: `${SHOTS}/teach-drift.png`, fullPage: true });
  await card.getByRole('button', { name: 'Retrain on these outcomes' }).click();
  await expect(page.getByRole('progressbar').first()).toBeVisible();
  await expect(page.getByRole('progressbar').first()).toHaveAttribute('aria-valuetext', /waiting for a worker/);
});

test('learn from a bigger model: upload states, see the teacher calls before starting, follow the job to its end', async ({
  page,
}) => {
  await signInWithIdp(page, 'distill-e2e');
  await page.getByRole('link', { name: 'Adapters', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Learn from a bigger model' })).toBeVisible();
  const states = Array.from({ length: 40 }, (_, i) =>
    JSON.stringify({
      state: `${['I was charged twice', 'the app crashes', 'where is your office'][i % 3]} (ticket ${i})`,
    }),
  );
  await page.getByLabel('Unlabelled states').setInputFiles({
    name: 'states.jsonl',
    mimeType: 'application/jsonl',
    buffer: Buffer.from(states.join('\n')),
  });
  await page.getByRole('button', { name: 'Upload states' }).click();
  await expect(page.getByText('Stored 40 unlabelled states; the account has 40.')).toBeVisible();
  await expect(page.getByLabel('Teacher', { exact: true })).toHaveValue('fixture');
  await page.getByLabel('Budget (teacher calls)').fill('30');
  await page.getByRole('button', { name: 'Estimate the calls' }).click();
  await expect(page.getByRole('status')).toContainText('40 states (0 already labelled), 1 templates: 30 teacher calls');
  await page.getByRole('button', { name: 'Start distillation' }).click();
  await expect(page.getByText(/Distillation job job_\w+ is queued/)).toBeVisible();
  await expect(page.getByText('distillation from fixture: 0 of 30 teacher calls')).toBeVisible();
  const bar = page.getByRole('progressbar').first();
  cp.services.runner.start();
  try {
    await expect(bar).toHaveAttribute('aria-valuenow', '100', { timeout: 30_000 });
  } finally {
    await cp.services.runner.stop();
  }
  await expect(page.getByText('distillation from fixture: 30 of 30 teacher calls')).toBeVisible();
  const adapter = page.getByRole('article', { name: /^Adapter ft:/ });
  await expect(adapter.getByRole('table', { name: /Against teacher fixture: \d+ held-out states/ })).toBeVisible();
  await expect(adapter.getByRole('columnheader', { name: 'Agreement with the teacher' })).toBeVisible();
  await page.screenshot({ path: `${SHOTS}/teach-distill.png`, fullPage: true });
  expect(await page.content()).not.toContain(TEACHER_KEY);
});
