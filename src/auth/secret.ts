import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The configured secret, else a dev secret generated once into `<dataDir>/auth-secret` (mode 0600) so
 * that sessions survive restarts, else (no data dir: tests) a random one for this process.
 */
export function resolveAuthSecret(configured: string | undefined, dataDir: string | undefined): string {
  if (configured) return configured;
  if (!dataDir) return randomBytes(32).toString('base64url');
  const file = path.join(dataDir, 'auth-secret');
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return existing;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  try {
    fs.writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (e) {
    // Another process wrote it first: use theirs.
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw e;
  }
}
