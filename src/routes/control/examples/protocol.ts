import { z } from '@hono/zod-openapi';
import { EXAMPLE_LIMITS } from '../../../domain/examples.ts';
import { UPLOAD_LIMITS } from '../../../systemone/examples.ts';

export const ExampleUpload = z.string().openapi({
  description: `JSON Lines (content-type: application/jsonl or application/x-ndjson): one LabelledExample object per line; blank lines are skipped. At most ${UPLOAD_LIMITS.maxRows} rows, ${UPLOAD_LIMITS.maxBytes / 1024 / 1024} MiB, ${UPLOAD_LIMITS.maxLineChars} characters a line, ${UPLOAD_LIMITS.maxQuestions} questions a row, states of ${UPLOAD_LIMITS.maxStateChars} characters. All or nothing: one invalid row refuses the upload, naming each problem by line and field.`,
  example:
    '{"state":"I was charged twice.","questions":{"team":{"type":"choice","criteria":{"billing":null,"tech":null}}},"labels":{"team":"billing"}}\n',
});

export const UploadResult = z
  .object({
    added: z.number().int().openapi({ description: 'Labelled questions stored by this upload.' }),
    duplicates: z.number().int().openapi({
      description:
        'Labelled questions of this upload not stored because earlier uploads stored the same template, state and label (as many times as they did).',
    }),
    rows: z.number().int(),
    total: z.number().int().openapi({ description: "The account's labelled questions after the upload." }),
    templates: z.array(
      z.object({ id: z.string(), type: z.string(), added: z.number().int(), duplicates: z.number().int() }),
    ),
  })
  .openapi('ExampleUploadResult');

export const TemplateSummary = z
  .object({
    id: z.string().openapi({ example: 'tpl_3f9a1c2b7d4e5f60a1b2' }),
    type: z.enum(['noul', 'choice', 'score']),
    question: z.record(z.string(), z.unknown()).openapi({ description: 'The template: type, instructions, criteria.' }),
    examples: z.number().int(),
    outcomes: z
      .number()
      .int()
      .openapi({ description: 'How many of the examples are recorded outcomes of live requests.' }),
    labels: z.record(z.string(), z.number().int()).openapi({ description: 'Examples per label (canonical form).' }),
    teacher_labels: z.number().int().openapi({
      description: "A teacher's soft labels of this template (distillation jobs), not counted in examples.",
    }),
    created_at: z.string().openapi({ format: 'date-time' }),
    last_added_at: z.string().nullable().openapi({ format: 'date-time' }),
  })
  .openapi('ExampleTemplate');

export const ExampleSummary = z
  .object({
    total: z.number().int(),
    limits: z.object({
      per_account: z.number().int(),
      templates_per_account: z.number().int(),
      rows_per_upload: z.number().int(),
      upload_bytes: z.number().int(),
    }),
    templates: z.array(TemplateSummary),
  })
  .openapi('ExampleSummary');

export const TemplateIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'tpl_3f9a1c2b7d4e5f60a1b2' }),
});

export const LIMITS = {
  per_account: EXAMPLE_LIMITS.perAccount,
  templates_per_account: EXAMPLE_LIMITS.templatesPerAccount,
  rows_per_upload: UPLOAD_LIMITS.maxRows,
  upload_bytes: UPLOAD_LIMITS.maxBytes,
};
