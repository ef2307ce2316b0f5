/** The console's client for its own origin's control plane. The session travels in an HttpOnly cookie. */
import type { WireAnswer } from '../../src/domain/systemone.ts';

export interface ApiErrorShape {
  status: number;
  message: string;
  /** The form field the server named (e.g. "password", "email", "name"), when it named one. */
  field?: string | undefined;
  type?: string | undefined;
  retryAfter?: number | undefined;
}

export type ApiError = Error & ApiErrorShape;

export function isApiError(value: unknown): value is ApiError {
  return value instanceof Error && typeof (value as Partial<ApiError>).status === 'number';
}

function apiError(shape: ApiErrorShape): ApiError {
  return Object.assign(new Error(shape.message), shape);
}

interface ErrorBody {
  message?: unknown;
  detail?: unknown;
}

function fieldOf(message: string, detail: unknown): string | undefined {
  if (Array.isArray(detail)) {
    const loc = (detail[0] as { loc?: unknown[] } | undefined)?.loc;
    if (Array.isArray(loc)) return loc.slice(1).join('.') || undefined;
  }
  const m = /^([a-zA-Z_.]+): /.exec(message);
  return m?.[1];
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
    throw apiError({ status: 0, message: 'the server could not be reached; check your connection and try again' });
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!res.ok) {
    const b = (body ?? {}) as ErrorBody;
    const message = typeof b.message === 'string' ? b.message : `request failed with status ${res.status}`;
    const detail = b.detail as { error_type?: unknown } | unknown[] | undefined;
    const type =
      detail && !Array.isArray(detail) && typeof detail.error_type === 'string' ? detail.error_type : undefined;
    const retry = Number(res.headers.get('retry-after'));
    throw apiError({
      status: res.status,
      message,
      field: fieldOf(message, detail),
      type,
      retryAfter: Number.isFinite(retry) && retry > 0 ? retry : undefined,
    });
  }
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

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
}

export interface CreatedKey extends ApiKey {
  key: string;
}

export interface UsageCounts {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  questions: number;
  errors: number;
}

export interface UsageDay extends UsageCounts {
  date: string;
}

export interface UsageReport {
  window: { days: number; from: string; to: string };
  totals: UsageCounts;
  daily: UsageDay[];
  keys: { id: string; name: string; prefix: string; revoked: boolean; totals: UsageCounts; daily: UsageDay[] }[];
}

export interface Metrics {
  n: number;
  accuracy: number | null;
  brier: number | null;
  ece: number | null;
}

export interface Comparison {
  model: Metrics;
  prior: Metrics | null;
  uniform: Metrics | null;
}

export interface ConsoleModel {
  name: string;
  id: string;
  description: string;
  release_date: string;
  context_limit: number;
  input_limit: number;
  card: {
    title: string;
    markdown: string;
    evaluation: Record<string, { seen: Comparison | null; unseen: Comparison | null }>;
  } | null;
}

export interface AuthProviders {
  email_password: boolean;
  providers: { id: string; name: string }[];
}

/** The wire answer, as the server's domain defines it (pure types, no server code). */
export type { WireAnswer };

export interface SystemOneResponse {
  model: string;
  answers: Record<string, WireAnswer>;
  usage: { input_tokens: number; output_tokens: number };
}

/** Where links in emails land: the console's own pages. */
export const consoleUrl = (path: string) => `${window.location.origin}/console${path}`;
