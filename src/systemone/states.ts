/**
 * Unlabelled states in an upload (issue 34): one JSON object per line, a `state` as POST
 * /v1/systemone takes it (and an optional `id` for the uploader's reference), for a teacher to label.
 * Bounded and validated as labelled examples are (src/systemone/examples.ts UPLOAD_LIMITS), all or nothing.
 */
import { z } from '@hono/zod-openapi';
import type { FieldIssue } from '../lib/errors.ts';
import { parseJsonLines, schemaIssues, stateTooLong, UPLOAD_LIMITS } from './examples.ts';
import { SystemOneRequest } from './protocol.ts';

export const UnlabelledRow = z
  .object({
    id: z.string().max(UPLOAD_LIMITS.maxIdChars, `at most ${UPLOAD_LIMITS.maxIdChars} characters`).optional(),
    state: SystemOneRequest.shape.state,
  })
  .strict()
  .openapi('UnlabelledState', {
    description: 'One line of an upload of unlabelled states: a state as POST /v1/systemone takes it.',
    example: { state: 'I was charged twice for my subscription.' },
  });

function checkState(line: number, value: unknown): { row?: string; issues: FieldIssue[] } {
  const parsed = UnlabelledRow.safeParse(value);
  if (!parsed.success) return { issues: schemaIssues(line, value, parsed.error) };
  const tooLong = stateTooLong(line, parsed.data.state);
  if (tooLong) return { issues: [tooLong] };
  return { row: JSON.stringify(parsed.data.state), issues: [] };
}

/** The states of an upload as compact JSON, in file order. */
export function parseStatesJsonl(text: string): string[] {
  return parseJsonLines(text, checkState);
}
