import type { ColumnType, Generated } from 'kysely';

/** Epoch milliseconds. bigint columns come back as strings from pg, so reads go through toMs(). */
type Ms = ColumnType<number, number, number>;

/** Accounts. Column names follow better-auth's `user` model so that it can own this table. */
export interface UserTable {
  id: string;
  name: string;
  email: string;
  emailVerified: ColumnType<boolean | number, boolean, boolean>;
  image: string | null;
  createdAt: ColumnType<Date | string, Date | string, Date | string>;
  updatedAt: ColumnType<Date | string, Date | string, Date | string>;
}

export interface ApiKeyTable {
  id: string;
  user_id: string;
  name: string;
  /** The first characters of the key, shown in listings. */
  prefix: string;
  /** SHA-256 of the whole key, base64url. The key itself is never stored. */
  hash: string;
  created_at: Ms;
  last_used_at: ColumnType<number | null, number | null, number | null>;
  revoked_at: ColumnType<number | null, number | null, number | null>;
}

export interface UsageEventTable {
  id: Generated<number>;
  /** The recorder's id for the event (migration 0005); null on rows written before it. */
  event_id: string | null;
  key_id: string;
  user_id: string;
  ts: Ms;
  route: string;
  model: string;
  status: number;
  questions: number;
  input_tokens: number;
  output_tokens: number;
  latency_ms: number;
  /** Calls this request made to a teacher (an adapter's fallback; migration 0011). */
  teacher_calls: ColumnType<number, number | undefined, number>;
  /**
   * A distillation job's teacher call (migration 0014): the job's id, with `key_id` empty; such an
   * event is not a request (its `teacher_calls` is 1). Null for requests.
   */
  job_id: ColumnType<string | null, string | null | undefined, string | null>;
}

type Time = ColumnType<Date | string, Date | string, Date | string>;

/** better-auth's models (migration 0002); better-auth writes them, we read and delete. */
export interface SessionTable {
  id: string;
  expiresAt: Time;
  token: string;
  createdAt: Time;
  updatedAt: Time;
  ipAddress: string | null;
  userAgent: string | null;
  userId: string;
}

export interface AccountTable {
  id: string;
  accountId: string;
  providerId: string;
  userId: string;
  accessToken: string | null;
  refreshToken: string | null;
  idToken: string | null;
  accessTokenExpiresAt: Time | null;
  refreshTokenExpiresAt: Time | null;
  scope: string | null;
  password: string | null;
  createdAt: Time;
  updatedAt: Time;
}

export interface VerificationTable {
  id: string;
  identifier: string;
  value: string;
  expiresAt: Time;
  createdAt: Time;
  updatedAt: Time;
}

/** Usage kept after an account is deleted: daily totals with no user or key (migration 0003). */
export interface UsageAggregateTable {
  day: string;
  route: string;
  model: string;
  requests: ColumnType<number | string, number, number>;
  errors: ColumnType<number | string, number, number>;
  questions: ColumnType<number | string, number, number>;
  input_tokens: ColumnType<number | string, number, number>;
  output_tokens: ColumnType<number | string, number, number>;
  /** Teacher calls of the folded requests (migration 0012). */
  teacher_calls: ColumnType<number | string, number | undefined, number>;
}

/** A question template of an account's labelled examples (migration 0006): type, instructions, criteria. */
export interface ExampleTemplateTable {
  user_id: string;
  /** templateOf(question).id: tpl_ + 20 hex of the SHA-256 of the canonical question. */
  id: string;
  type: string;
  /** The question in canonical JSON. */
  question: string;
  created_at: Ms;
}

/** One labelled question about one state (migration 0006): uploaded, or an outcome of a retained request. */
export interface ExampleTable {
  id: string;
  user_id: string;
  template_id: string;
  /** The state as compact JSON (a JSON string for text states). */
  state: string;
  /** The true label in the template's canonical form (noul true/false, choice its label, score the level index). */
  label: string;
  source: 'upload' | 'outcome';
  /** Outcomes: the request and question they label (unique per account). */
  request_id: string | null;
  question_id: string | null;
  /** Outcomes (migration 0009): the answer served for it (canonical class order, JSON) and who served it. */
  served: ColumnType<string | null, string | null | undefined, string | null>;
  served_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** Uploads (migration 0013): the hash of template, state and label (src/lib/example-hash.ts); outcomes null. */
  content_hash: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Ms;
}

/** Opt-in retention of request content (migration 0007): per account (scope 'account') or per key (its id). */
export interface RetentionPolicyTable {
  user_id: string;
  scope: string;
  /** Days a retained request is kept. */
  days: number;
  updated_at: Ms;
}

/** A /v1/systemone request kept because its key or account opted in (migration 0007). */
export interface RetainedRequestTable {
  /** The response's x-request-id. */
  request_id: string;
  user_id: string;
  key_id: string;
  /** The model id that answered (the base model or an adapter). */
  model: string;
  /** The request's state as compact JSON. */
  state: string;
  /** The request's questions map as compact JSON. */
  questions: string;
  /** The answers as served, compact JSON. */
  answers: string;
  created_at: Ms;
  expires_at: Ms;
}

/** A queued adapter training job (migration 0008); claimed by one process at a time through its lease. */
export interface TrainingJobTable {
  id: string;
  user_id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  /** Template ids to fit (JSON array), or null: every template with enough examples. */
  templates: string | null;
  /** Progress in thousandths (0..1000). */
  progress: number;
  stage: string;
  message: string;
  /** The job's report (JSON): per template, held-out metrics before and after, reliability, served or not. */
  result: string | null;
  adapter_id: string | null;
  attempts: number;
  /** The process holding the job while it runs, and until when (a lapsed lease lets another take it over). */
  lease_owner: string | null;
  lease_until: ColumnType<number | null, number | null, number | null>;
  created_at: Ms;
  started_at: ColumnType<number | null, number | null, number | null>;
  finished_at: ColumnType<number | null, number | null, number | null>;
  /** A job waiting for the engine is not claimed before this (ms); null: at once (migration 0010). */
  not_before: ColumnType<number | null, number | null | undefined, number | null>;
  /** Times it went back to the queue to wait for the engine (its backoff grows with them). */
  waits: ColumnType<number, number | undefined, number>;
  /** When it was last claimed: accounts whose jobs were claimed longest ago go first. */
  claimed_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** Labelled examples it reads (an estimate until it has read them). */
  examples: ColumnType<number, number | undefined, number>;
  /** How long its successful run took (ms): the throughput estimates are measured from. */
  run_ms: ColumnType<number | null, number | null | undefined, number | null>;
  /** 'adapter' (from labelled examples) or 'distill' (from a teacher's answers; migration 0011). */
  kind: ColumnType<'adapter' | 'distill', 'adapter' | 'distill' | undefined, 'adapter' | 'distill'>;
  /** A distillation job's spec (JSON: teacher, questions, source, budget, ...), null for other jobs. */
  spec: ColumnType<string | null, string | null | undefined, string | null>;
  /** Calls made to the teacher so far. */
  teacher_calls: ColumnType<number, number | undefined, number>;
}

/** A state uploaded without labels, for a teacher to label (migration 0011). */
export interface UnlabelledStateTable {
  id: string;
  user_id: string;
  /** The state as compact JSON (a JSON string for text states). */
  state: string;
  created_at: Ms;
}

/** A teacher's distribution for one template about one state (migration 0011): a soft label. */
export interface SoftLabelTable {
  id: string;
  user_id: string;
  template_id: string;
  /** The teacher's id (BRIER_TEACHERS). */
  teacher: string;
  /** SHA-256 of `state` (hex): unique per account, template and teacher. */
  state_hash: string;
  state: string;
  /** The distribution in the template's canonical class order (JSON array). */
  distribution: string;
  job_id: string;
  created_at: Ms;
}

/** A fitted adapter (migration 0008): a model id of its account, served on its base model. */
export interface AdapterTable {
  id: string;
  user_id: string;
  base_model: string;
  job_id: string;
  /** AdapterFile JSON (src/engines/adapters/adapter.ts). */
  artifact: string;
  /** Per template: held-out metrics before and after, reliability data (JSON). */
  report: string;
  created_at: Ms;
  /** Distilled adapters: the teacher they learnt from (migration 0011). */
  teacher: ColumnType<string | null, string | null | undefined, string | null>;
  /** Opt-in fallback to the teacher (JSON {teacher, threshold}), or null. */
  fallback: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface Database {
  user: UserTable;
  training_job: TrainingJobTable;
  adapter: AdapterTable;
  unlabelled_state: UnlabelledStateTable;
  soft_label: SoftLabelTable;
  retention_policy: RetentionPolicyTable;
  retained_request: RetainedRequestTable;
  example_template: ExampleTemplateTable;
  example: ExampleTable;
  api_key: ApiKeyTable;
  usage_event: UsageEventTable;
  session: SessionTable;
  account: AccountTable;
  verification: VerificationTable;
  usage_aggregate: UsageAggregateTable;
}

/** bigint columns arrive as strings from pg and numbers from SQLite. */
export function toMs(value: number | string | null): number | null {
  return value === null ? null : Number(value);
}
