import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { makePrivateDir, PRIVATE_FILE_MODE, tightenFile } from '../lib/private-files.ts';

/**
 * The configured secret, else a dev secret generated once into `<dataDir>/auth-secret` so that sessions
 * survive restarts, else (no data dir: tests) a random one for this process. The file is 0600 whatever
 * the umask (an existing one readable by others is made 0600 when read), and a data dir created here is
 * 0700.
 */
export function resolveAuthSecret(configured: string | undefined, dataDir: string | undefined): string {
  if (configured) return configured;
  if (!dataDir) return randomBytes(32).toString('base64url');
  const file = path.join(dataDir, 'auth-secret');
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) {
      tightenFile(file);
      return existing;
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  makePrivateDir(dataDir);
  const secret = randomBytes(32).toString('base64url');
  try {
    fs.writeFileSync(file, `${secret}\n`, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    fs.chmodSync(file, PRIVATE_FILE_MODE);
    return secret;
  } catch (e) {
    // Another process wrote it first: use theirs.
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw e;
  }
}
