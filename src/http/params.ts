import { z } from '@hono/zod-openapi';

/**
 * An integer query parameter from `min` to `max`, `fallback` when absent. Anything else (a word, a
 * fraction, out of range) is one 422 whose message says what was expected: `query parameter days:
 * expected an integer from 1 to 366, got "week"` (src/http/errors.ts adds where and what was sent).
 */
export function integerQuery(name: string, range: { min: number; max: number; fallback: number }, description: string) {
  const expected = `expected an integer from ${range.min} to ${range.max}`;
  return z.coerce
    .number<string>({ error: expected })
    .int({ error: expected })
    .min(range.min, { error: expected })
    .max(range.max, { error: expected })
    .default(range.fallback)
    .openapi({ param: { name, in: 'query' }, description, example: range.fallback });
}
