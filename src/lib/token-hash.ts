import { createHash } from 'node:crypto';

/**
 * How a bearer secret is stored: SHA-256, base64url. Session tokens are stored this way (the
 * database column and migration 0004 both use it); a leaked table yields no usable session.
 */
export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
