import { createMiddleware } from 'hono/factory';
import type { KeyService } from '../../domain/keys.ts';
import { fail } from '../../lib/errors.ts';
import type { AppEnv } from '../env.ts';

/** Bearer API keys: none sent is 403, an unknown or revoked key is 401 (as the hosted API does). */
export const apiKeyAuth = (keys: KeyService) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header('authorization');
    if (!header)
      throw fail('MISSING_CREDENTIALS', 'missing Authorization header; send Authorization: Bearer <API key>');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw fail('INVALID_CREDENTIALS', 'malformed Authorization header; expected Bearer <API key>');
    const owner = await keys.verify(match[1]);
    if (!owner) throw fail('INVALID_CREDENTIALS', 'invalid or revoked API key');
    c.set('owner', owner);
    await next();
  });
