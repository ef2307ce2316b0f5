import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.ts';
import { staticSite } from '../../http/static-site.ts';

/** Where `npm run build:console` writes the console (dist/console of this repository). */
export const DEFAULT_CONSOLE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dist/console');

/** The console's address: where a browser opening `/` goes. */
export const CONSOLE_PATH = '/console/';

/** The console page a verification link lands on when the sign-up named no callbackURL (an API sign-up). */
export const VERIFIED_PATH = `${CONSOLE_PATH}verified`;

/** GET /console/*: the built single-page web console (no credential; it signs in through the control plane). */
export function registerConsole(app: OpenAPIHono<AppEnv>, options: { dir?: string | undefined } = {}): void {
  const handle = staticSite({ dir: options.dir ?? DEFAULT_CONSOLE_DIR, basePath: '/console', mode: 'spa' });
  app.on(['GET', 'HEAD'], '/console', handle);
  app.on(['GET', 'HEAD'], '/console/*', handle);
}
