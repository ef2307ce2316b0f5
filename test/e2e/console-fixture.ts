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
