import { z } from '@hono/zod-openapi';
import type { Teachers } from '../../../engines/teachers.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';

export const Teacher = z
  .object({
    id: z.string().openapi({ example: 'jev', description: 'The id a distillation job or a fallback names.' }),
    kind: z.enum(['systemone', 'openai', 'gguf']).openapi({
      description:
        'systemone: another System One server (its key held by this server); openai: an OpenAI-compatible completions server; gguf: a GGUF model run here.',
    }),
    concurrency: z.number().int().openapi({ description: 'Calls this server makes to it at once, at most.' }),
    ms_per_call: z.number().nullable().openapi({
      description:
        'Measured milliseconds per answered call (a moving mean of the latest calls, retries included); null until a call was answered.',
    }),
    calls: z.number().int().openapi({ description: 'Calls answered since this server started.' }),
    failed_attempts: z
      .number()
      .int()
      .openapi({ description: 'Attempts that failed (timeouts, 429, 5xx), retried or not.' }),
  })
  .openapi('Teacher');

export const teachersRoute = defineRoute({
  auth: 'key-or-session',
  method: 'get',
  path: '/teachers',
  tags: ['Adapters'],
  summary: 'The teachers this server offers to distillation jobs, with their measured time per call',
  description: "Teachers are configured by the operator (BRIER_TEACHERS). A teacher's address and key are never shown.",
  responses: {
    200: {
      description: 'Teachers',
      content: { 'application/json': { schema: z.object({ data: z.array(Teacher) }).openapi('TeacherList') } },
    },
    ...errorResponses(401, 403),
  },
});

export function registerTeachers(api: Api, teachers: Teachers): void {
  api.openapi(teachersRoute, (c) =>
    c.json(
      {
        data: teachers.list().map((t) => {
          const s = t.stats();
          return {
            id: t.id,
            kind: t.kind,
            concurrency: t.concurrency,
            ms_per_call: s.msPerCall === null ? null : Math.round(s.msPerCall * 10) / 10,
            calls: s.calls,
            failed_attempts: s.failedAttempts,
          };
        }),
      },
      200,
    ),
  );
}
