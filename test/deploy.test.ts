/**
 * The deployment files as a new operator uses them: the secrets deploy/env.example suggests must work
 * where deploy/compose.yaml puts them (POSTGRES_PASSWORD pasted as it is into DATABASE_URL).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from './server.ts';

const read = (file: string) => fs.readFileSync(path.join(ROOT, 'deploy', file), 'utf8');

/** What `openssl rand -hex N` / `-base64 N` prints, made here (no openssl needed). */
function generate(command: string): string {
  const m = /openssl rand -(hex|base64) (\d+)/.exec(command);
  assert.ok(m, `env.example suggests a generator this test knows: ${command}`);
  return randomBytes(Number(m[2])).toString(m[1] === 'hex' ? 'hex' : 'base64');
}

test('the password env.example suggests survives compose pasting it into DATABASE_URL (40 draws)', () => {
  const suggested = /openssl rand -\w+ \d+/.exec(read('env.example'))?.[0] ?? '';
  const template = /DATABASE_URL: (postgres:\/\/.+)$/m.exec(read('compose.yaml'))?.[1] ?? '';
  assert.match(template, /\$\{POSTGRES_PASSWORD/);
  for (let i = 0; i < 40; i++) {
    const password = generate(suggested);
    assert.ok(password.length >= 32, 'at least 32 characters');
    const url = template.replace(/\$\{POSTGRES_PASSWORD[^}]*\}/, password);
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    assert.ok(parsed, `not a URL with password ${password}`);
    assert.equal(decodeURIComponent(parsed.password), password, `the password as parsed from ${url}`);
    assert.equal(parsed.hostname, 'postgres');
    assert.equal(parsed.pathname, '/brier');
  }
});
