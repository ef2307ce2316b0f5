import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.ts';
import { staticSite } from '../../http/static-site.ts';

/** Where `npm run build:docs` writes the documentation site. */
export const DEFAULT_DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dist/docs');

/** GET /docs/*: the built documentation site. */
export function registerDocs(app: OpenAPIHono<AppEnv>, options: { dir?: string | undefined } = {}): void {
  const handle = staticSite({ dir: options.dir ?? DEFAULT_DOCS_DIR, basePath: '/docs', mode: 'pages' });
  app.on(['GET', 'HEAD'], '/docs', handle);
  app.on(['GET', 'HEAD'], '/docs/*', handle);
}
