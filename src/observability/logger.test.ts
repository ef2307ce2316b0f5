import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { createLogger, fixedFieldLogger } from './logger.ts';

test('secrets are redacted; fixed-field lines go to the same stream at the same level without the pass', () => {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('info', { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) });
  logger.info({ req: { headers: { authorization: 'Bearer bk_secret' } }, user: { password: 'hunter2' } }, 'x');
  const fixed = fixedFieldLogger(logger);
  fixed.info({ requestId: 'req_1', status: 200 }, 'request');
  fixed.debug({ requestId: 'req_2' }, 'below the level');
  assert.equal(lines.length, 2);
  assert.ok(!JSON.stringify(lines[0]).includes('bk_secret') && !JSON.stringify(lines[0]).includes('hunter2'));
  assert.deepEqual([lines[1]?.requestId, lines[1]?.service, lines[1]?.msg], ['req_1', 'brier', 'request']);
  // a logger made elsewhere is used as it is
  const other = pino({ level: 'silent' });
  assert.equal(fixedFieldLogger(other), other);
});
