import fs from 'node:fs';
import { expect, type Page, test } from '@playwright/test';
import {
  type ConsoleServer,
  createKey,
  GGUF_CALIBRATION,
  SHOTS,
  showAsGguf,
  signInWithIdp,
  startConsoleServer,
} from './console-fixture.ts';

/**
 * The console of an account with data, on a 390 px phone (issue 41). Item 5: every page, signed in
 * and with data so that every table and chart renders: the document is never wider than the screen,
 * chart labels are at least 10 px, and no badge is cut off (the measures are written to
 * test-results/phone-widths.json). Item 6: a job that serves nothing shows each template's reason,
 * and a template says what decided whether it is served. Item 7: the playground says who answered.
 */

const PHONE = { width: 390, height: 844 };
test.use({ viewport: PHONE });
test.describe.configure({ mode: 'serial' });

let server: ConsoleServer;
let key = '';
let adapterId = '';
let distilledId = '';
const measured: Record<string, Measure> = {};

const routing = {
  type: 'choice',
  instructions: 'Which of our support teams should handle this customer ticket, given what it says?',
  criteria: {
    'billing-and-refunds': 'charges, invoices and refunds',
    'technical-support': 'bugs, crashes and outages',
    'everything-else': null,
  },
};
/** The fake engine answers `abstain:` questions uniformly: nothing to learn, so no adapter is served. */
const coin = { type: 'noul', instructions: 'abstain: did the customer flip a coin before writing?' };

async function call(path: string, init: { method?: string; body?: unknown; jsonl?: string } = {}) {
  const res = await fetch(`${server.cp.url}${path}`, {
    method: init.method ?? (init.body === undefined && init.jsonl === undefined ? 'GET' : 'POST'),
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': init.jsonl === undefined ? 'application/json' : 'application/jsonl',
    },
    body: init.jsonl ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });
  const text = await res.text();
  expect(res.status, `${path}: ${text}`).toBeLessThan(300);
  return text ? JSON.parse(text) : null;
}

const phrases: Record<string, string[]> = {
  'billing-and-refunds': ['I was charged twice', 'refund my last payment', 'my invoice is wrong'],
  'technical-support': ['the app crashes on start', 'login page shows an error', 'the site is down again'],
  'everything-else': ['do you have a shop in Paris', 'who founded the company', 'where is your office'],
};
const teams = Object.keys(phrases);

/** Labelled examples, unlabelled states, a served adapter, a job that serves nothing, a distilled adapter, outcomes. */
async function seed(): Promise<void> {
  const lines = Array.from({ length: 45 }, (_, i) => {
    const team = teams[i % 3] as string;
    const state = `${phrases[team]?.[i % 3]} (ticket ${i})`;
    return JSON.stringify({
      state,
      questions: { team: routing, coin },
      labels: { team, coin: i % 2 === 0 },
    });
  });
  await call('/control/v1/examples', { jsonl: lines.join('\n') });
  const { templates } = await call('/control/v1/examples');
  const coinTemplate = templates.find((t: { type: string }) => t.type === 'noul').id;
  await call('/control/v1/training-jobs', { body: { templates: [coinTemplate] } });
  await call('/control/v1/training-jobs', { body: {} });
  const states = Array.from({ length: 40 }, (_, i) =>
    JSON.stringify({ state: `${phrases[teams[i % 3] as string]?.[(i + 1) % 3]} (state ${i})` }),
  );
  await call('/control/v1/states', { jsonl: states.join('\n') });
  await call('/control/v1/distillation-jobs', {
    // a fallback threshold of 1: every answer of the distilled adapter is asked of its teacher
    body: { teacher: 'fixture', questions: { team: routing }, source: 'states', budget: 30, fallback_threshold: 1 },
  });
  // Outcomes of live answers, for the calibration charts.
  await call('/control/v1/retention', { method: 'PUT', body: { days: 7 } });
  for (let i = 0; i < 24; i++) {
    const res = await fetch(`${server.cp.url}/v1/systemone`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ state: `live ticket ${i}`, questions: { team: routing } }),
    });
    await call('/control/v1/outcomes', {
      body: { request_id: res.headers.get('x-request-id'), question_id: 'team', label: teams[i % 3] },
    });
  }
  server.cp.services.runner.start();
  try {
    await expect
      .poll(
        async () =>
          (await call('/control/v1/training-jobs')).data.filter((j: { status: string }) => j.status === 'succeeded')
            .length,
        { timeout: 60_000 },
      )
      .toBe(3);
  } finally {
    await server.cp.services.runner.stop();
  }
  const { data } = await call('/control/v1/adapters');
  const distilled = (a: { templates: { distill?: unknown }[] }) => a.templates[0]?.distill !== undefined;
  adapterId = data.find((a: { templates: { distill?: unknown }[] }) => !distilled(a)).id;
  distilledId = data.find(distilled).id;
}

interface Measure {
  /** document.documentElement.scrollWidth */
  documentWidth: number;
  /** The smallest chart label as drawn, in CSS pixels (null: no chart). */
  smallestChartLabel: number | null;
  /** Badges whose box is cut by an ancestor that clips or scrolls. */
  cutBadges: string[];
  /** The console's tables wider than their box (they scroll sideways inside it): [caption, table width, box width]. */
  scrolledTables: [string, number, number][];
}

/** What a phone user sees of the page now. */
function measure(page: Page): Promise<Measure> {
  return page.evaluate(() => {
    const labels = [...document.querySelectorAll('svg text')].map((t) => {
      const ctm = (t as SVGTextElement).getScreenCTM();
      const scale = ctm ? Math.min(Math.hypot(ctm.a, ctm.b), Math.hypot(ctm.c, ctm.d)) : 1;
      return Number.parseFloat(getComputedStyle(t).fontSize) * scale;
    });
    const cutBadges = [...document.querySelectorAll('.badge')]
      .filter((badge) => {
        const box = badge.getBoundingClientRect();
        for (let el = badge.parentElement; el && el !== document.body; el = el.parentElement) {
          const style = getComputedStyle(el);
          if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
          const clip = el.getBoundingClientRect();
          if (box.left < clip.left - 0.5 || box.right > clip.right + 0.5) return true;
        }
        return badge.scrollWidth > badge.clientWidth + 1;
      })
      .map((b) => b.textContent ?? '');
    // The model card's own tables (Markdown, up to 9 columns of prose) scroll inside their box.
    const scrolledTables = [...document.querySelectorAll('.table-wrap')]
      .filter((w) => !w.closest('.markdown') && w.scrollWidth > w.clientWidth + 1)
      .map((w): [string, number, number] => [
        w.querySelector('caption')?.textContent?.slice(0, 60) ?? '',
        w.scrollWidth,
        w.clientWidth,
      ]);
    return {
      documentWidth: document.documentElement.scrollWidth,
      smallestChartLabel: labels.length > 0 ? Math.round(Math.min(...labels) * 10) / 10 : null,
      cutBadges,
      scrolledTables,
    };
  });
}

/** Measures the page, saves a full-page screenshot, and holds it to the phone's width. */
async function checkPage(page: Page, name: string): Promise<Measure> {
  const m = await measure(page);
  measured[name] = m;
  await page.screenshot({ path: `${SHOTS}/phone-${name}.png`, fullPage: true });
  expect.soft(m.documentWidth, `${name}: document width at ${PHONE.width} px`).toBeLessThanOrEqual(PHONE.width);
  if (m.smallestChartLabel !== null)
    expect.soft(m.smallestChartLabel, `${name}: chart labels`).toBeGreaterThanOrEqual(10);
  expect.soft(m.cutBadges, `${name}: badges cut off`).toEqual([]);
  expect.soft(m.scrolledTables, `${name}: tables that scroll sideways`).toEqual([]);
  return m;
}

test.beforeAll(async ({ browser }) => {
  fs.mkdirSync(SHOTS, { recursive: true });
  server = await startConsoleServer();
  const page = await browser.newPage({ viewport: PHONE });
  await signInWithIdp(page, server.cp, 'phone-e2e');
  key = await createKey(page, 'phone');
  await page.close();
  await seed();
});
test.afterAll(async () => {
  fs.writeFileSync('test-results/phone-widths.json', `${JSON.stringify(measured, null, 2)}\n`);
  await server?.close();
});

test('at 390 px every console page fits the screen: no sideways scroll, chart labels of 10 px or more, whole badges', async ({
  page,
}) => {
  await signInWithIdp(page, server.cp, 'phone-e2e');
  await checkPage(page, 'keys');

  await page.getByRole('link', { name: 'Adapters', exact: true }).click();
  await expect(page.getByRole('article', { name: /^Adapter ft:/ }).first()).toBeVisible();
  await expect(page.getByRole('region', { name: /^Calibration of / })).toBeVisible();
  await checkPage(page, 'adapters');

  await page.getByRole('link', { name: 'Usage', exact: true }).click();
  await expect(page.getByRole('img', { name: /Requests per day/ })).toBeVisible();
  // every teacher call of the distillation job is counted, and listed by job (issue 41)
  await expect(page.getByTestId('total-teacher-calls')).not.toHaveText('0');
  await expect(page.getByRole('table', { name: /Teacher calls of distillation jobs/ })).toBeVisible();
  await checkPage(page, 'usage');

  await page.getByRole('link', { name: 'Model', exact: true }).click();
  await page.getByText('The full model card').click();
  await expect(page.getByTestId('model-card')).toBeVisible();
  await checkPage(page, 'model');
  // A custom GGUF model's page: its calibration report has 10 columns.
  await showAsGguf(page, GGUF_CALIBRATION.fitted);
  await page.reload();
  await expect(page.getByTestId('calibration-report')).toBeVisible();
  await checkPage(page, 'model-gguf');
  await page.unrouteAll();

  await page.getByRole('link', { name: 'Playground', exact: true }).click();
  await page.getByLabel('Model').selectOption(adapterId);
  await page.getByRole('button', { name: 'JSON' }).click();
  await page
    .getByLabel('Request body (JSON)')
    .fill(JSON.stringify({ model: adapterId, state: 'refund my last payment please', questions: { team: routing } }));
  await page.getByRole('button', { name: 'Run' }).click();
  await expect(page.getByRole('region', { name: 'Answers' }).getByRole('article')).toHaveCount(1);
  await checkPage(page, 'playground');
});

test("a job that serves nothing lists each template's reason; a template says what decided whether it is served", async ({
  page,
}) => {
  await signInWithIdp(page, server.cp, 'phone-e2e');
  await page.getByRole('link', { name: 'Adapters', exact: true }).click();
  const reasons = page.getByRole('list', { name: /^Why job job_\w+ serves no template$/ });
  await expect(reasons.getByRole('listitem')).toHaveCount(1);
  await expect(reasons).toContainText(
    'abstain: did the customer flip a coin before writing? (noul, 45 examples): not served: not better than the base model on',
  );
  const labelled = page.getByRole('article', { name: `Adapter ${adapterId}` });
  await expect(labelled.getByTestId('serving-rule').first()).toContainText(
    'Served only where, on examples each answered by a fit that never saw it, both its Brier and its NLL are lower than the base model’s (*)',
  );
  await expect(labelled.locator('th.decides').first()).toHaveText('Brier*');
  await expect(labelled.locator('td[data-label="NLL *"]').first()).toBeVisible();
  const distilled = page.getByRole('article', { name: `Adapter ${distilledId}` });
  await expect(distilled.getByTestId('serving-rule')).toContainText(
    'both its Brier and its KL to the teacher are lower',
  );
  await expect(distilled.locator('th.decides')).toHaveText(['Brier to the teacher*', 'KL to the teacher*']);
});

test('the playground says who answered each question: the adapter, the base model, or the teacher', async ({
  page,
}) => {
  await signInWithIdp(page, server.cp, 'phone-e2e');
  await page.getByRole('link', { name: 'Playground', exact: true }).click();
  const run = async (model: string) => {
    await page.getByRole('button', { name: 'JSON' }).click();
    await page.getByLabel('Request body (JSON)').fill(
      JSON.stringify({
        model,
        state: 'refund my last payment please',
        questions: { team: routing, urgent: { type: 'noul', instructions: 'Is it urgent?' } },
      }),
    );
    await page.getByRole('button', { name: 'Run' }).click();
    const answers = page.getByRole('region', { name: 'Answers' });
    await expect(answers.getByRole('article')).toHaveCount(2);
    return {
      team: answers.getByRole('article', { name: 'Answer to team' }).getByTestId('answered-by'),
      urgent: answers.getByRole('article', { name: 'Answer to urgent' }).getByTestId('answered-by'),
    };
  };
  const byAdapter = await run(adapterId);
  await expect(byAdapter.team).toHaveText(`adapter Answered by the adapter ${adapterId}.`);
  await expect(byAdapter.urgent).toHaveText(
    'base Answered by the base model brier-fake-3.0.0: no template of the adapter matches this question.',
  );
  await page.screenshot({ path: `${SHOTS}/phone-answered-by.png`, fullPage: true });
  const byTeacher = await run(distilledId);
  await expect(byTeacher.team).toHaveText(
    'teacher Answered by teacher fixture: the adapter was less sure than its fallback threshold.',
  );
  await page.getByRole('button', { name: 'JSON' }).click();
  await page
    .getByLabel('Request body (JSON)')
    .fill(JSON.stringify({ state: 'refund my last payment please', questions: { team: routing } }));
  await page.getByRole('button', { name: 'Run' }).click();
  await expect(page.getByRole('region', { name: 'Answers' }).getByRole('article')).toHaveCount(1);
  await expect(page.getByTestId('answered-by')).toHaveCount(0);
});
