/** The console's client for its own origin's control plane. The session travels in an HttpOnly cookie. */
import type { z } from '@hono/zod-openapi';
import type { AdapterSummary as AdapterSchema } from '../../src/routes/control/adapters/protocol.ts';
import type { AuthProviders as AuthProvidersSchema } from '../../src/routes/control/auth-providers/route.ts';
import type { CalibrationReport as CalibrationReportSchema } from '../../src/routes/control/calibration/protocol.ts';
import type { DistillEstimate as DistillEstimateSchema } from '../../src/routes/control/distillation-jobs/protocol.ts';
import type {
  ExampleSummary as ExampleSummarySchema,
  UploadResult as UploadResultSchema,
} from '../../src/routes/control/examples/protocol.ts';
import type { CreatedKey as CreatedKeySchema, KeyListing } from '../../src/routes/control/keys/protocol.ts';
import type {
  Comparison as ComparisonSchema,
  ConsoleModel as ConsoleModelSchema,
} from '../../src/routes/control/model/route.ts';
import type { RetentionPolicy as RetentionPolicySchema } from '../../src/routes/control/retention/protocol.ts';
import type {
  TemplateReport as TemplateReportSchema,
  TrainingJob as TrainingJobSchema,
} from '../../src/routes/control/training-jobs/protocol.ts';
import type {
  UsageCounts as UsageCountsSchema,
  UsageDay as UsageDaySchema,
  UsageReport as UsageReportSchema,
} from '../../src/routes/control/usage/protocol.ts';
import type { SystemOneResponse as SystemOneResponseSchema } from '../../src/systemone/protocol.ts';

/** One entry of a 422 detail list, as the console shows it. */
export interface ApiErrorIssue {
  /** Where, as the server names it in messages: `questions.q1.type`, `state.rows[1]`; "body" for the whole body. */
  field: string;
  msg: string;
  type: string;
}

export interface ApiErrorShape {
  status: number;
  message: string;
  /** The form field the server named (e.g. "password", "email", "name"), when it named one. */
  field?: string | undefined;
  /** The error type: `detail.error_type`, or the first entry's `type` of a 422 detail list. */
  type?: string | undefined;
  /** A 422's detail list, one entry per problem (empty for other errors). */
  issues: ApiErrorIssue[];
  retryAfter?: number | undefined;
}

export type ApiError = Error & ApiErrorShape;

export function isApiError(value: unknown): value is ApiError {
  return value instanceof Error && typeof (value as Partial<ApiError>).status === 'number';
}

function apiError(shape: ApiErrorShape): ApiError {
  return Object.assign(new Error(shape.message), shape);
}

/** The error of a request that got no answer at all. */
const unreachable = () =>
  apiError({ status: 0, message: 'the server could not be reached; check your connection and try again', issues: [] });

/** A 422 entry's `loc` (after "body") as a path; a parse error's character position is not a field. */
function fieldOfLoc(loc: unknown[], type: string): string {
  if (type === 'json_invalid') return 'body';
  let out = '';
  for (const part of loc.slice(1)) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += `${out ? '.' : ''}${String(part)}`;
  }
  return out || 'body';
}

/**
 * Reads the server's error body (src/http/errors.ts: `{detail, message, request_id}`, where `detail`
 * is `{error_type, message}` or, for an invalid body (422), a FastAPI-style list `[{loc, msg, type}]`).
 */
export function readApiError(status: number, body: unknown, retryAfter: string | null): ApiErrorShape {
  const b = (body ?? {}) as { message?: unknown; detail?: unknown };
  const message = typeof b.message === 'string' ? b.message : `request failed with status ${status}`;
  const list = Array.isArray(b.detail) ? (b.detail as { loc?: unknown; msg?: unknown; type?: unknown }[]) : [];
  const issues = list.map((d) => {
    const type = typeof d.type === 'string' ? d.type : 'value_error';
    return { field: fieldOfLoc(Array.isArray(d.loc) ? d.loc : [], type), msg: String(d.msg ?? ''), type };
  });
  const detail = b.detail as { error_type?: unknown } | undefined;
  const type =
    issues[0]?.type ??
    (detail && !Array.isArray(detail) && typeof detail.error_type === 'string' ? detail.error_type : undefined);
  const named = /^([a-zA-Z_.]+): /.exec(message)?.[1];
  const field = issues.length > 0 ? (issues[0]?.field === 'body' ? undefined : issues[0]?.field) : named;
  const retry = Number(retryAfter);
  return {
    status,
    message,
    field,
    type,
    issues,
    retryAfter: Number.isFinite(retry) && retry > 0 ? retry : undefined,
  };
}

export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const method = init.method ?? (init.body === undefined ? 'GET' : 'POST');
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: init.body === undefined ? {} : { 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  } catch {
    throw unreachable();
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!res.ok) throw apiError(readApiError(res.status, body, res.headers.get('retry-after')));
  return body as T;
}

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
}

export async function getSession(): Promise<SessionUser | null> {
  const s = await api<{ user: SessionUser } | null>('/control/v1/auth/get-session');
  return s?.user ?? null;
}

// Response types are the server's own zod schemas (type-only imports: no server code is bundled),
// so the console cannot drift from what the API validates and documents.
export type ApiKey = z.infer<typeof KeyListing>;
export type CreatedKey = z.infer<typeof CreatedKeySchema>;
export type UsageCounts = z.infer<typeof UsageCountsSchema>;
export type UsageDay = z.infer<typeof UsageDaySchema>;
export type UsageReport = z.infer<typeof UsageReportSchema>;
export type ConsoleModel = z.infer<typeof ConsoleModelSchema>;
export type Comparison = z.infer<typeof ComparisonSchema>;
export type Metrics = Comparison['model'];
export type AuthProviders = z.infer<typeof AuthProvidersSchema>;
export type SystemOneResponse = z.infer<typeof SystemOneResponseSchema>;

export type WireAnswer = SystemOneResponse['answers'][string];

/** Where links in emails land: the console's own pages. */
export const consoleUrl = (path: string) => `${window.location.origin}/console${path}`;

// Labelled examples, retention, training jobs and adapters (the "teach your task" page).
export type ExampleSummary = z.infer<typeof ExampleSummarySchema>;
export type ExampleTemplate = ExampleSummary['templates'][number];
export type UploadResult = z.infer<typeof UploadResultSchema>;
export type TrainingJob = z.infer<typeof TrainingJobSchema>;
export type TemplateReport = z.infer<typeof TemplateReportSchema>;
export type Adapter = z.infer<typeof AdapterSchema>;
export type RetentionPolicy = z.infer<typeof RetentionPolicySchema>;
export type CalibrationReport = z.infer<typeof CalibrationReportSchema>;
export type TemplateCalibration = CalibrationReport['templates'][number];

/** POST /control/v1/examples: JSON Lines, not JSON, so not through api(); errors are thrown the same way. */
export async function uploadExamples(jsonl: string, path = '/control/v1/examples'): Promise<UploadResult> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/jsonl' },
      body: jsonl,
    });
  } catch {
    throw unreachable();
  }
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) throw apiError(readApiError(res.status, body, res.headers.get('retry-after')));
  return body as UploadResult;
}

/** A teacher as GET /control/v1/teachers lists it (issue 34). */
export interface Teacher {
  id: string;
  kind: 'systemone' | 'openai' | 'gguf';
  concurrency: number;
  ms_per_call: number | null;
  calls: number;
  failed_attempts: number;
}

/** What a distillation job would cost, as its dry run answers. */
export type DistillEstimate = z.infer<typeof DistillEstimateSchema>;
