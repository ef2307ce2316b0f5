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
  BRIER_MODEL_TEMPERATURE: z.coerce.number().positive().default(1),
  BRIER_CONTEXT_SIZE: z.coerce.number().int().min(256).default(4096),
  BRIER_THREADS: z.coerce.number().int().min(1).default(2),
  BRIER_QUEUE_LIMIT: z.coerce.number().int().min(1).default(64),
  BRIER_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  BRIER_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(1_048_576),
  BRIER_USAGE_FLUSH_MS: z.coerce.number().int().min(10).default(1000),
  BRIER_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(1000).default(1000),
  BRIER_MAX_KEYS_PER_ACCOUNT: z.coerce.number().int().min(1).default(3),
  SITE_ORIGIN: z.string().url().optional(),
  LOG_LEVEL: LogLevel.default('info'),
});

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string;
  model: string | undefined;
  modelTemperature: number;
  contextSize: number;
  threads: number;
  queueLimit: number;
  requestTimeoutMs: number;
  maxBodyBytes: number;
  usageFlushMs: number;
  keyCacheTtlMs: number;
  maxKeysPerAccount: number;
  siteOrigin: string | undefined;
  logLevel: z.infer<typeof LogLevel>;
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
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    databaseUrl: e.DATABASE_URL ?? `file:${path.join(dataDir, 'brier.db')}`,
    model: e.BRIER_MODEL,
    modelTemperature: e.BRIER_MODEL_TEMPERATURE,
    contextSize: e.BRIER_CONTEXT_SIZE,
    threads: e.BRIER_THREADS,
    queueLimit: e.BRIER_QUEUE_LIMIT,
    requestTimeoutMs: e.BRIER_REQUEST_TIMEOUT_MS,
    maxBodyBytes: e.BRIER_MAX_BODY_BYTES,
    usageFlushMs: e.BRIER_USAGE_FLUSH_MS,
    keyCacheTtlMs: e.BRIER_KEY_CACHE_TTL_MS,
    maxKeysPerAccount: e.BRIER_MAX_KEYS_PER_ACCOUNT,
    siteOrigin: e.SITE_ORIGIN,
    logLevel: e.LOG_LEVEL,
  };
}
