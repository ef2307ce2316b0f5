import fs from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import * as z from 'zod';

const LogLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

const Env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  BRIER_DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z
    .string()
    .regex(/^(file:|postgres:\/\/|postgresql:\/\/)/, 'DATABASE_URL must start with file: or postgres://')
    .optional(),
  BRIER_MODEL: z.string().min(1).optional(),
  BRIER_UPSTREAM_API_KEY: z.string().min(1).optional(),
  BRIER_UPSTREAM_MODEL: z.string().min(1).optional(),
  BRIER_MODEL_TEMPERATURE: z.coerce.number().positive().default(1),
  BRIER_UNCALIBRATED: z.enum(['shrink', 'raw']).default('shrink'),
  BRIER_GGUF_PROMPT: z.enum(['plain', 'chat']).default('plain'),
  BRIER_CONTEXT_SIZE: z.coerce.number().int().min(256).default(4096),
  BRIER_THREADS: z.coerce.number().int().min(1).default(2),
  BRIER_QUEUE_LIMIT: z.coerce.number().int().min(1).default(64),
  BRIER_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  BRIER_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(1_048_576),
  BRIER_CONTROL_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(16_384),
  BRIER_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  BRIER_BODY_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  BRIER_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  BRIER_USAGE_FLUSH_MS: z.coerce.number().int().min(10).default(1000),
  BRIER_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(1000).default(1000),
  BRIER_MAX_KEYS_PER_ACCOUNT: z.coerce.number().int().min(1).default(3),
  SITE_ORIGIN: z.string().url().optional(),
  LOG_LEVEL: LogLevel.default('info'),
  BETTER_AUTH_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  BRIER_AUTH_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  PUBLIC_URL: z.string().url().optional(),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'SMTP_URL must start with smtp:// or smtps://')
    .optional(),
  MAIL_FROM: z.string().min(3).default('Brier <no-reply@localhost>'),
  OIDC_ISSUER: z.string().url().optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  OIDC_NAME: z.string().min(1).default('OpenID Connect'),
  GITHUB_CLIENT_ID: z.string().min(1).optional(),
  GITHUB_CLIENT_SECRET: z.string().min(1).optional(),
  GOOGLE_CLIENT_ID: z.string().min(1).optional(),
  GOOGLE_CLIENT_SECRET: z.string().min(1).optional(),
  RATE_LIMIT_STORE: z.enum(['memory', 'postgres', 'redis']).default('memory'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'REDIS_URL must start with redis:// or rediss://')
    .optional(),
  BRIER_ENGINE_PARALLELISM: z.coerce.number().int().min(1).max(64).optional(),
  BRIER_ENCODER_RUNTIME: z.enum(['onnx', 'onnx-float32', 'tfjs']).default('onnx'),
  BRIER_KV_CACHE_MB: z.coerce.number().int().min(1).optional(),
  BRIER_ANSWER_CACHE_ENTRIES: z.coerce.number().int().min(0).max(1_000_000).default(4096),
  BRIER_METRICS: z.enum(['on', 'off']).default('on'),
  BRIER_METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  BRIER_ROLE: z.enum(['gateway', 'worker']).default('gateway'),
  BRIER_WORKERS: z.string().min(1).optional(),
  BRIER_WORKER_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  BRIER_WORKER_HEALTH_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
  BRIER_USAGE_BUFFER_MAX: z.coerce.number().int().min(100).default(100_000),
  BRIER_DB_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5000),
  BRIER_TRUSTED_PROXIES: z.string().min(1).optional(),
  BRIER_TRAINING_JOBS: z.enum(['on', 'off']).default('on'),
  BRIER_TRAINING_CONCURRENCY: z.coerce.number().int().min(1).max(64).optional(),
  BRIER_TRAINING_MAX_EXAMPLES: z.coerce.number().int().min(20).max(1_000_000).default(20_000),
  BRIER_LEGACY_EXTENSION_FIELDS: z.enum(['on', 'off']).default('off'),
  BRIER_TEACHERS: z.string().min(1).optional(),
});

/** Teachers at most (documented). */
export const MAX_TEACHERS = 16;

/** One teacher as the operator writes it in BRIER_TEACHERS (JSON, inline or in a file). */
const TeacherEntry = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'an id is 1 to 64 letters, digits, dots, dashes or underscores'),
    /** http(s):// System One server, openai+http(s):// completions server, or a .gguf path. */
    model: z.string().min(1).max(2048),
    /** The upstream model to ask for (System One: an id or alias; openai+: a model name). */
    upstream_model: z.string().min(1).max(256).optional(),
    /** The environment variable holding the teacher's key (kept out of the file). */
    api_key_env: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]{0,127}$/, 'an environment variable name')
      .optional(),
    timeout_ms: z.number().int().min(100).max(600_000).default(30_000),
    concurrency: z.number().int().min(1).max(64).default(4),
    retries: z.number().int().min(0).max(10).default(4),
  })
  .strict();

export type TeacherKind = 'systemone' | 'openai' | 'gguf';

/** A configured teacher: an engine Brier runs or reaches; its key only here and in the engine. */
export interface TeacherConfig {
  id: string;
  kind: TeacherKind;
  /** The URL (without a scheme prefix for openai+) or the GGUF path. */
  target: string;
  upstreamModel: string | undefined;
  apiKey: string | undefined;
  timeoutMs: number;
  concurrency: number;
  retries: number;
}

/**
 * BRIER_TEACHERS: a JSON array of teachers, inline (starting with `[`) or the path of a file holding it.
 * A teacher's key comes from the environment variable its `api_key_env` names (never from the file).
 */
function parseTeachers(value: string | undefined, env: Record<string, string | undefined>): TeacherConfig[] {
  if (value === undefined) return [];
  const bad = (why: string) => new Error(`invalid configuration:\n  BRIER_TEACHERS: ${why}`);
  let text = value.trim();
  if (!text.startsWith('[')) {
    try {
      text = fs.readFileSync(text, 'utf8');
    } catch (error) {
      throw bad(`not a JSON array and not a readable file (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw bad('not valid JSON (a JSON array of {id, model, ...})');
  }
  const list = z.array(TeacherEntry).max(MAX_TEACHERS, `at most ${MAX_TEACHERS} teachers`).safeParse(raw);
  if (!list.success) {
    const i = list.error.issues[0];
    throw bad(`${i?.path.join('.') || '(root)'}: ${i?.message ?? 'invalid'}`);
  }
  const seen = new Set<string>();
  return list.data.map((t) => {
    if (seen.has(t.id)) throw bad(`teacher id ${t.id} is given twice`);
    seen.add(t.id);
    const apiKey = t.api_key_env ? env[t.api_key_env] : undefined;
    if (t.api_key_env && !apiKey) throw bad(`teacher ${t.id}: ${t.api_key_env} is not set`);
    const openai = /^openai\+(https?:\/\/.+)$/.exec(t.model);
    const kind: TeacherKind = openai ? 'openai' : /^https?:\/\//.test(t.model) ? 'systemone' : 'gguf';
    if (kind === 'gguf' && !t.model.endsWith('.gguf'))
      throw bad(`teacher ${t.id}: model is an http(s):// or openai+http(s):// URL, or a .gguf path`);
    return {
      id: t.id,
      kind,
      target: (openai?.[1] ?? t.model).replace(/\/+$/, ''),
      upstreamModel: t.upstream_model,
      apiKey,
      timeoutMs: t.timeout_ms,
      concurrency: t.concurrency,
      retries: t.retries,
    };
  });
}

/** A third-party sign-in provider's client credentials. */
export interface OAuthClient {
  clientId: string;
  clientSecret: string;
}

export type RateLimitStore = 'memory' | 'postgres' | 'redis';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string;
  model: string | undefined;
  /** Bearer key for an upstream server (BRIER_MODEL=http(s)://... or openai+http(s)://...). */
  upstreamApiKey: string | undefined;
  /**
   * The model to ask an upstream server for: openai+ engines default to the first id of its
   * GET /v1/models, System One upstreams to their latest alias.
   */
  upstreamModel: string | undefined;
  modelTemperature: number;
  /**
   * How a GGUF or upstream model without a calibration file (`brier models calibrate`) answers:
   * mixed half and half with the uniform answer (shrink), or as it comes (raw).
   */
  uncalibrated: 'shrink' | 'raw';
  /**
   * GGUF models (BRIER_MODEL and teachers): prompts as plain text, or in the model's chat template
   * (src/engines/gguf/frames.ts). Calibration files are per format.
   */
  ggufPrompt: 'plain' | 'chat';
  contextSize: number;
  threads: number;
  queueLimit: number;
  requestTimeoutMs: number;
  maxBodyBytes: number;
  /** Byte limit of control-plane bodies (sign-up, sign-in, keys). */
  controlMaxBodyBytes: number;
  /** HTTP server timeouts (ms): a request's headers, its whole request, an idle kept-alive connection. */
  http: { headersTimeoutMs: number; bodyTimeoutMs: number; keepAliveTimeoutMs: number };
  usageFlushMs: number;
  keyCacheTtlMs: number;
  maxKeysPerAccount: number;
  siteOrigin: string | undefined;
  logLevel: z.infer<typeof LogLevel>;
  /** Signs sessions and tokens; undefined means a dev secret generated into the data dir. */
  authSecret: string | undefined;
  /** Where browsers reach this server (links in emails, OAuth callbacks, cookie security). */
  publicUrl: string;
  smtpUrl: string | undefined;
  mailFrom: string;
  oidc: (OAuthClient & { issuer: string; name: string }) | undefined;
  github: OAuthClient | undefined;
  google: OAuthClient | undefined;
  rateLimitStore: RateLimitStore;
  redisUrl: string | undefined;
  /** Requests an engine answers at once (batched); undefined: the engine's default. */
  engineParallelism: number | undefined;
  /** Where the embedded engine runs USE-lite: onnxruntime (default) or TF.js WASM (for comparisons). */
  encoderRuntime: 'onnx' | 'onnx-float32' | 'tfjs';
  /** GGUF: memory for cached state prefixes (KV cache), MiB; undefined: the engine's default. */
  kvCacheMb: number | undefined;
  /** GGUF: questions whose scores are kept per state (LRU by content hash); 0 turns it off. */
  answerCacheEntries: number;
  /** GET /metrics (Prometheus) is served. */
  metricsEnabled: boolean;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** gateway: the public API (with a local engine or BRIER_WORKERS); worker: inference only, for gateways. */
  role: 'gateway' | 'worker';
  /** Inference backends a gateway spreads requests over (BRIER_WORKERS); empty: a local engine. */
  workers: string[];
  /** The credential between gateways and workers (never logged). */
  workerToken: string | undefined;
  /** How often a gateway probes each worker's health (ms). */
  workerHealthMs: number;
  /** Most usage events buffered in memory while the database cannot take them; past it the oldest are dropped (counted). */
  usageBufferMax: number;
  /** PostgreSQL: longest wait for a connection and for one query (ms), so that a slow database gives 503s, not hangs. */
  dbTimeoutMs: number;
  /** Addresses of the load balancers whose X-Forwarded-For is believed for rate limits. */
  trustedProxies: string[];
  /** This gateway runs queued adapter training jobs in the background (low priority). */
  trainingJobs: boolean;
  /** Training jobs this process runs at once; undefined: one per two cores. */
  trainingConcurrency: number | undefined;
  /** Examples one training job reads at most (the newest past it). */
  trainingMaxExamples: number;
  /**
   * Answers also carry the extensions' names before 0.2.0 (`abstained`, `answered_by`) next to
   * `x_abstained` and `x_answered_by`: an opt-in for the deprecation period (see CHANGELOG.md).
   */
  legacyExtensionFields: boolean;
  /** BRIER_TEACHERS: models distillation jobs learn from (their keys held here, never sent to clients). */
  teachers: TeacherConfig[];
}

/** A worker URL: http(s):// (a Brier worker), openai+http(s):// (vLLM, SGLang, llama.cpp server) or systemone+http(s)://. */
const WORKER_URL = /^(openai\+|systemone\+)?https?:\/\/[^\s,]+$/;

function pair(what: string, id: string | undefined, secret: string | undefined): OAuthClient | undefined {
  if (id === undefined && secret === undefined) return undefined;
  if (id === undefined || secret === undefined) {
    throw new Error(`invalid configuration:\n  ${what}: set both the client id and the client secret, or neither`);
  }
  return { clientId: id, clientSecret: secret };
}

/** Parses the environment once. Throws a readable error naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const blankless = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const parsed = Env.safeParse(blankless);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.BRIER_DATA_DIR);
  const oidc = pair('OIDC_CLIENT_ID/OIDC_CLIENT_SECRET', e.OIDC_CLIENT_ID, e.OIDC_CLIENT_SECRET);
  if (oidc && !e.OIDC_ISSUER) throw new Error('invalid configuration:\n  OIDC_ISSUER: required with OIDC_CLIENT_ID');
  if (e.RATE_LIMIT_STORE === 'redis' && !e.REDIS_URL) {
    throw new Error('invalid configuration:\n  REDIS_URL: required with RATE_LIMIT_STORE=redis');
  }
  if (e.RATE_LIMIT_STORE === 'postgres' && !e.DATABASE_URL?.startsWith('postgres')) {
    throw new Error('invalid configuration:\n  RATE_LIMIT_STORE=postgres needs a postgres:// DATABASE_URL');
  }
  const workers = (e.BRIER_WORKERS ?? '')
    .split(',')
    .map((w) => w.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  const badWorker = workers.find((w) => !WORKER_URL.test(w));
  if (badWorker !== undefined) {
    throw new Error(
      `invalid configuration:\n  BRIER_WORKERS: ${JSON.stringify(badWorker.slice(0, 80))} is not http(s)://, openai+http(s):// or systemone+http(s)://`,
    );
  }
  if (e.BRIER_ROLE === 'worker' && !e.BRIER_WORKER_TOKEN) {
    throw new Error('invalid configuration:\n  BRIER_WORKER_TOKEN: required with BRIER_ROLE=worker');
  }
  if (e.BRIER_ROLE === 'worker' && workers.length > 0) {
    throw new Error(
      'invalid configuration:\n  BRIER_WORKERS: a worker answers with its own engine; set it on gateways',
    );
  }
  if (workers.some((w) => /^https?:/.test(w)) && !e.BRIER_WORKER_TOKEN) {
    throw new Error('invalid configuration:\n  BRIER_WORKER_TOKEN: required when BRIER_WORKERS lists Brier workers');
  }
  const trustedProxies = (e.BRIER_TRUSTED_PROXIES ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  const badProxy = trustedProxies.find(
    (a) => !/^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(a) || isIP(a.split('/')[0] ?? '') === 0,
  );
  if (badProxy !== undefined) {
    throw new Error(
      `invalid configuration:\n  BRIER_TRUSTED_PROXIES: ${JSON.stringify(badProxy.slice(0, 60))} is not an IP address or CIDR range`,
    );
  }
  if (workers.length > 0 && e.BRIER_MODEL) {
    throw new Error(
      'invalid configuration:\n  BRIER_MODEL: unset it when BRIER_WORKERS is set (the workers serve the model)',
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    databaseUrl: e.DATABASE_URL ?? `file:${path.join(dataDir, 'brier.db')}`,
    model: e.BRIER_MODEL,
    upstreamApiKey: e.BRIER_UPSTREAM_API_KEY,
    upstreamModel: e.BRIER_UPSTREAM_MODEL,
    modelTemperature: e.BRIER_MODEL_TEMPERATURE,
    uncalibrated: e.BRIER_UNCALIBRATED,
    ggufPrompt: e.BRIER_GGUF_PROMPT,
    contextSize: e.BRIER_CONTEXT_SIZE,
    threads: e.BRIER_THREADS,
    queueLimit: e.BRIER_QUEUE_LIMIT,
    requestTimeoutMs: e.BRIER_REQUEST_TIMEOUT_MS,
    maxBodyBytes: e.BRIER_MAX_BODY_BYTES,
    controlMaxBodyBytes: e.BRIER_CONTROL_MAX_BODY_BYTES,
    http: {
      headersTimeoutMs: e.BRIER_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: e.BRIER_BODY_TIMEOUT_MS,
      keepAliveTimeoutMs: e.BRIER_KEEP_ALIVE_TIMEOUT_MS,
    },
    usageFlushMs: e.BRIER_USAGE_FLUSH_MS,
    keyCacheTtlMs: e.BRIER_KEY_CACHE_TTL_MS,
    maxKeysPerAccount: e.BRIER_MAX_KEYS_PER_ACCOUNT,
    siteOrigin: e.SITE_ORIGIN,
    logLevel: e.LOG_LEVEL,
    authSecret: e.BETTER_AUTH_SECRET ?? e.BRIER_AUTH_SECRET,
    publicUrl: (e.PUBLIC_URL ?? `http://${e.HOST}:${e.PORT}`).replace(/\/+$/, ''),
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    oidc: oidc && e.OIDC_ISSUER ? { ...oidc, issuer: e.OIDC_ISSUER.replace(/\/+$/, ''), name: e.OIDC_NAME } : undefined,
    github: pair('GITHUB_CLIENT_ID/GITHUB_CLIENT_SECRET', e.GITHUB_CLIENT_ID, e.GITHUB_CLIENT_SECRET),
    google: pair('GOOGLE_CLIENT_ID/GOOGLE_CLIENT_SECRET', e.GOOGLE_CLIENT_ID, e.GOOGLE_CLIENT_SECRET),
    rateLimitStore: e.RATE_LIMIT_STORE,
    redisUrl: e.REDIS_URL,
    engineParallelism: e.BRIER_ENGINE_PARALLELISM,
    encoderRuntime: e.BRIER_ENCODER_RUNTIME,
    kvCacheMb: e.BRIER_KV_CACHE_MB,
    answerCacheEntries: e.BRIER_ANSWER_CACHE_ENTRIES,
    metricsEnabled: e.BRIER_METRICS === 'on',
    metricsToken: e.BRIER_METRICS_TOKEN,
    role: e.BRIER_ROLE,
    workers,
    workerToken: e.BRIER_WORKER_TOKEN,
    workerHealthMs: e.BRIER_WORKER_HEALTH_MS,
    usageBufferMax: e.BRIER_USAGE_BUFFER_MAX,
    dbTimeoutMs: e.BRIER_DB_TIMEOUT_MS,
    trustedProxies,
    trainingJobs: e.BRIER_TRAINING_JOBS === 'on',
    trainingConcurrency: e.BRIER_TRAINING_CONCURRENCY,
    trainingMaxExamples: e.BRIER_TRAINING_MAX_EXAMPLES,
    legacyExtensionFields: e.BRIER_LEGACY_EXTENSION_FIELDS === 'on',
    teachers: parseTeachers(e.BRIER_TEACHERS, env),
  };
}
