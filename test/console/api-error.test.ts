import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readApiError } from '../../console/src/api.ts';

describe('console: reading an error body', () => {
  test('a 422 detail list: every problem at its field, the first one named as the field and type', () => {
    const e = readApiError(
      422,
      {
        detail: [
          { type: 'union_tag_invalid', loc: ['body', 'questions', 'q1', 'type'], msg: 'unknown question type "x"' },
          {
            type: 'too_long',
            loc: ['body', 'questions', 'c', 'criteria'],
            msg: 'choice needs 2 to 255 labels, got 256',
          },
          {
            type: 'duplicate_key',
            loc: ['body', 'state', 'rows', 1, 'id'],
            msg: 'the key "id" appears more than once',
          },
        ],
        message: 'questions.q1.type: unknown question type "x"; ...',
        request_id: 'req_0',
      },
      null,
    );
    assert.equal(e.status, 422);
    assert.equal(e.type, 'union_tag_invalid');
    assert.equal(e.field, 'questions.q1.type');
    assert.deepEqual(
      e.issues.map((i) => i.field),
      ['questions.q1.type', 'questions.c.criteria', 'state.rows[1].id'],
    );
    assert.equal(e.issues[1]?.msg, 'choice needs 2 to 255 labels, got 256');
  });

  test('a body that is not JSON names no field (its loc holds a character position)', () => {
    const e = readApiError(
      422,
      {
        detail: [{ type: 'json_invalid', loc: ['body', 52], msg: 'JSON decode error' }],
        message: 'body is not valid JSON',
      },
      null,
    );
    assert.deepEqual(e.issues, [{ field: 'body', msg: 'JSON decode error', type: 'json_invalid' }]);
    assert.equal(e.field, undefined);
  });

  test('any other error: its error_type, the field its message names, retry-after, no issues', () => {
    const e = readApiError(
      503,
      { detail: { error_type: 'overloaded', message: 'busy' }, message: 'queue: the model is busy' },
      '3',
    );
    assert.deepEqual(e, {
      status: 503,
      message: 'queue: the model is busy',
      field: 'queue',
      type: 'overloaded',
      issues: [],
      retryAfter: 3,
    });
    assert.equal(readApiError(500, null, null).message, 'request failed with status 500');
  });
});
