import fs from 'node:fs';
import path from 'node:path';

/** Owner read/write for files, owner rwx for directories: what holds data, keys and secrets. */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Creates `dir` and any missing parents as 0700 whatever the umask (chmod after mkdir). Directories
 * that already exist keep their mode: a data file may sit in a shared folder (the working directory).
 */
export function makePrivateDir(dir: string): void {
  const target = path.resolve(dir);
  const first = fs.mkdirSync(target, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined) return;
  for (let d = target; ; d = path.dirname(d)) {
    fs.chmodSync(d, PRIVATE_DIR_MODE);
    if (d === first || d === path.dirname(d)) break;
  }
}

/**
 * Makes `file` 0600 when it exists with more than owner read/write (group or other bits, or execute);
 * a narrower mode (0400) is left alone. Answers the mode it had when it was changed, else undefined.
 */
export function tightenFile(file: string): number | undefined {
  let mode: number;
  try {
    mode = fs.statSync(file).mode & 0o777;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  if ((mode & ~PRIVATE_FILE_MODE) === 0) return undefined;
  fs.chmodSync(file, PRIVATE_FILE_MODE);
  return mode;
}
