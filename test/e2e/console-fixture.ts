/**
 * What the console's Playwright specs share: the real service graph on loopback (SQLite, mail over
 * SMTP to a sink, OIDC against a real provider, the deterministic fake engine, the shipped model card)
 * with a System One teacher for distillation, and the steps every spec takes to get a signed-in
 * account with a key.
 */
import path from 'node:path';
import { expect, type Page } from '@playwright/test';
import { type ControlPlane, startControlPlane } from '../fixtures/control-plane.ts';
import { startTeacherServer, type TeacherServer } from '../fixtures/teacher-server.ts';

export const SHOTS = 'test-results/screenshots';
export const TEACHER_KEY = 'e2e-teacher-key-0123456789abcdef';

export interface ConsoleServer {
  cp: ControlPlane;
  teacher: TeacherServer;
  close(): Promise<void>;
}

/** The control plane with the teacher `fixture` (issue 34) and the shipped model card for the model page. */
export async function startConsoleServer(): Promise<ConsoleServer> {
  const teacher = await startTeacherServer({ key: TEACHER_KEY, sharpness: 1.2 });
  const cp = await startControlPlane('sqlite', {
    modelCardDir: path.resolve('models', 'brier-lite'),
    teachers: [
      {
        id: 'fixture',
        kind: 'systemone',
        target: teacher.url,
        upstreamModel: undefined,
        apiKey: TEACHER_KEY,
        timeoutMs: 5000,
        concurrency: 4,
        retries: 2,
      },
    ],
  });
  return {
    cp,
    teacher,
    async close() {
      await cp.close();
      await teacher.close();
    },
  };
}

/** Signs in through the test IdP (no email round trip): a fresh, verified account on the keys page. */
export async function signInWithIdp(page: Page, cp: ControlPlane, sub: string): Promise<void> {
  cp.idp.signInAs({ sub, email: `${sub}@example.com`, email_verified: true, name: sub });
  await page.goto(`${cp.url}/console/sign-in`);
  await page.getByRole('button', { name: 'Sign in with Test IdP' }).click();
  await expect(page.getByRole('heading', { name: 'API keys' })).toBeVisible();
}

/** Creates a key on the keys page and returns it as its dialog shows it (the dialog stays open). */
export async function createKey(page: Page, name: string): Promise<string> {
  await page.getByLabel('Key name').fill(name);
  await page.getByRole('button', { name: 'Create key' }).click();
  const dialog = page.getByRole('dialog', { name: 'Your new API key' });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByText('only time it is shown')).toBeVisible();
  const key = await dialog.getByLabel('API key value').inputValue();
  expect(key).toMatch(/^brier_sk_/);
  return key;
}

const metrics = (brier: number, ece: number) => ({ n: 40, accuracy: 0.6, brier, nll: 0.9, ece, ece_floor: 0.08 });
const reportRow = (type: string, set: string, before: number, after: number, heldOut: number) => ({
  type,
  set,
  n: 40,
  uniform_brier: 0.25,
  before: metrics(before, 0.2),
  after: metrics(after, 0.06),
  held_out: metrics(heldOut, 0.07),
});

/** A custom GGUF model's calibration as GET /control/v1/model reports it (src/routes/control/model/route.ts). */
export const GGUF_CALIBRATION = {
  /** None fitted: answers mixed half and half with the uniform answer. */
  shrink: {
    calibrated: false,
    mode: 'shrink',
    key: `gguf-${'a'.repeat(64)}`,
    types: { noul: null, choice: null, score: null },
    fitted_at: null,
    data: null,
    report: [],
  },
  /** Fitted on the shipped set, one source set still worse than uniform held out. */
  fitted: {
    calibrated: true,
    mode: 'fitted',
    key: `gguf-${'a'.repeat(64)}`,
    types: {
      noul: { temperature: 1.2, alpha: 0.3 },
      choice: { temperature: 1, alpha: 0.5 },
      score: { temperature: 0.9, alpha: 0.4 },
    },
    fitted_at: '2026-11-28T12:00:00.000Z',
    data: { source: 'shipped', name: 'models/calibration-set/calibration-set.jsonl', sha256: 'b', rows: 360 },
    report: [
      reportRow('noul', 'sst2', 0.31, 0.22, 0.23),
      reportRow('noul', 'boolq', 0.33, 0.26, 0.27),
      reportRow('choice', 'clinc150', 0.3, 0.2, 0.21),
      reportRow('score', 'yelp', 0.28, 0.21, 0.22),
    ],
  },
};

/**
 * Makes the console's model page show a custom GGUF model with `calibration`: the server's own
 * answer to GET /control/v1/model, with the GGUF model's id, description, no card and its calibration.
 */
export async function showAsGguf(page: Page, calibration: object): Promise<void> {
  await page.route('**/control/v1/model', async (route) => {
    const response = await route.fetch();
    const body = await response.json();
    await route.fulfill({
      response,
      json: {
        ...body,
        id: 'SmolLM2-135M-Instruct.Q4_1',
        name: 'SmolLM2-135M-Instruct.Q4_1',
        description:
          'A custom GGUF model loaded from SmolLM2-135M-Instruct.Q4_1.gguf, not from the Brier catalog: what it is good for depends on that model. Instruct (chat) models give the most useful probabilities.',
        card: null,
        calibration,
      },
    });
  });
}
