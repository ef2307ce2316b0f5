import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { resolveAuthSecret } from './secret.ts';

const modeOf = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);

let root: string;
let umask: number;
before(() => {
  umask = process.umask(0o022);
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-secret-'));
});
after(() => {
  process.umask(umask);
  fs.rmSync(root, { recursive: true, force: true });
});

test('the generated dev secret is 0600 in a 0700 data dir, and the same secret comes back on the next start', () => {
  const dataDir = path.join(root, 'new', 'data');
  const secret = resolveAuthSecret(undefined, dataDir);
  assert.ok(secret.length >= 32);
  assert.equal(modeOf(path.join(dataDir, 'auth-secret')), '600');
  assert.equal(modeOf(dataDir), '700');
  assert.equal(modeOf(path.dirname(dataDir)), '700');
  assert.equal(resolveAuthSecret(undefined, dataDir), secret);
});

test('an existing secret file readable by others is made 0600 when it is read', () => {
  const dataDir = path.join(root, 'old');
  fs.mkdirSync(dataDir);
  const file = path.join(dataDir, 'auth-secret');
  fs.writeFileSync(file, `${'s'.repeat(40)}\n`, { mode: 0o644 });
  assert.equal(resolveAuthSecret(undefined, dataDir), 's'.repeat(40));
  assert.equal(modeOf(file), '600');
});

test('a configured secret wins and writes nothing', () => {
  const dataDir = path.join(root, 'configured');
  assert.equal(resolveAuthSecret('c'.repeat(32), dataDir), 'c'.repeat(32));
  assert.equal(fs.existsSync(dataDir), false);
});
