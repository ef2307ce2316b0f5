/**
 * Reference tables kept in sync with the code by generating them from it:
 * - env.md: every variable of the zod schema in src/config.ts (names and accepted values read from the
 *   schema's source; defaults and meanings from README.md's configuration table, the one place that
 *   describes them; a variable README does not describe must be described in EXTRA_ENV below, or the
 *   build fails);
 * - errors.md: the error table of src/http/errors.ts (status, error_type and when, as data);
 * - rate-limits.md: the auth rate-limit budgets of src/http/middleware/rate-limit.ts;
 * - models.md: the model catalog of src/models/catalog.ts and the System One aliases.
 * `node docs/scripts/tables.ts`
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODEL_CATALOG } from '../../src/catalog/catalog.ts';
import { MAX_CHARS_PER_TOKEN } from '../../src/engines/engine.ts';
import { ERRORS, errorResponses } from '../../src/http/errors.ts';
import { DEFAULT_AUTH_RATE_RULES } from '../../src/http/middleware/rate-limit.ts';
import { AUTH_FIELD_LIMITS } from '../../src/routes/control/auth/protocol.ts';
import { MODEL_ALIASES } from '../../src/systemone/models.ts';
import {
  MAX_CHOICE_OPTIONS,
  MAX_JSON_DEPTH,
  MAX_LABEL_CHARS,
  MAX_MODEL_CHARS,
  MAX_QUESTION_ID_CHARS,
  MAX_QUESTIONS,
  MAX_SCORE_LEVELS,
  MIN_CHOICE_OPTIONS,
  MIN_SCORE_LEVELS,
} from '../../src/systemone/protocol.ts';
import { code, generatedNote, inline, table } from './markdown.ts';
import { DOCS_DIR, type GeneratedFile, writeFiles } from './openapi.ts';

const ROOT = path.resolve(DOCS_DIR, '..');

/** Variables README.md's table does not (yet) describe: [default, meaning]. */
export const EXTRA_ENV: Record<string, [string, string]> = {
  REDIS_URL: [
    'unset',
    '`redis://` or `rediss://` URL of the Redis that holds rate-limit counters with `RATE_LIMIT_STORE=redis`',
  ],
};

export interface EnvVar {
  name: string;
  /** The zod chain as written in src/config.ts. */
  source: string;
  accepted: string;
}

/** The variables of `const Env = z.object({...})` in src/config.ts, in order. */
export function parseConfigSchema(source: string): EnvVar[] {
  const start = source.indexOf('const Env = z.object({');
  if (start < 0) throw new Error('src/config.ts: no `const Env = z.object({` found');
  const end = source.indexOf('\n});', start);
  const body = source.slice(start, end);
  const consts = new Map<string, string>();
  for (const m of source.matchAll(/^const (\w+) = (z\.[^;]+);/gm)) consts.set(m[1] ?? '', m[2] ?? '');
  const vars: EnvVar[] = [];
  const re = /^ {2}([A-Z][A-Z0-9_]*):([\s\S]*?)(?=^ {2}[A-Z][A-Z0-9_]*:|$(?![\s\S]))/gm;
  for (const m of body.matchAll(re)) {
    const name = m[1] ?? '';
    const chain = (m[2] ?? '').replace(/\s+\./g, '.').replace(/\s+/g, ' ').trim().replace(/,$/, '');
    vars.push({
      name,
      source: chain,
      accepted: describeChain(consts.get(chain.split('.')[0] ?? '') ?? chain) + describeTail(chain),
    });
  }
  if (vars.length === 0) throw new Error('src/config.ts: the Env schema has no variables?');
  return vars;
}

function describeChain(chain: string): string {
  const enumMatch = /z\.enum\(\[([^\]]*)\]\)/.exec(chain);
  if (enumMatch)
    return `one of ${(enumMatch[1] ?? '')
      .replace(/'/g, '')
      .split(/,\s*/)
      .map((v) => code(v))
      .join(', ')}`;
  const parts: string[] = [];
  if (/z\.coerce\.number\(\)/.test(chain)) parts.push(/\.int\(\)/.test(chain) ? 'integer' : 'number');
  else if (/z\.string\(\)/.test(chain)) parts.push(/\.url\(\)/.test(chain) ? 'URL' : 'string');
  if (/\.positive\(\)/.test(chain)) parts.push('> 0');
  const min = /\.min\(([\d_]+)/.exec(chain)?.[1];
  const max = /\.max\(([\d_]+)/.exec(chain)?.[1];
  const isString = /z\.string\(\)/.test(chain);
  const num = (v: string) => v.replaceAll('_', '');
  if (min !== undefined && max !== undefined) parts.push(`${num(min)} to ${num(max)}`);
  else if (min !== undefined && !(isString && min === '1')) parts.push(`${isString ? 'length ' : ''}≥ ${num(min)}`);
  else if (max !== undefined) parts.push(`≤ ${num(max)}`);
  const regexMessage = /\.regex\(\/.*?\/, '([^']*)'\)/.exec(chain)?.[1];
  if (regexMessage) parts.push(`(${regexMessage.replace(/^[A-Z_]+ /, '')})`);
  return parts.join(' ');
}

function describeTail(chain: string): string {
  const dflt = /\.default\(([^)]*)\)/.exec(chain)?.[1];
  if (dflt !== undefined) return `; default ${code(dflt.replace(/^'(.*)'$/, '$1').replaceAll('_', ''))}`;
  return /\.optional\(\)/.test(chain) ? '; optional' : '';
}

interface ReadmeRow {
  names: string[];
  cells: string[];
}

/** The rows of README.md's `## Configuration` table, with the variable names each row covers. */
export function parseReadmeConfig(readme: string): ReadmeRow[] {
  const start = readme.indexOf('\n## Configuration');
  if (start < 0) throw new Error('README.md: no "## Configuration" section');
  const end = readme.indexOf('\n## ', start + 5);
  const rows: ReadmeRow[] = [];
  for (const line of readme.slice(start, end < 0 ? undefined : end).split('\n')) {
    if (!line.startsWith('|') || /^\|\s*-/.test(line) || /^\|\s*variable\s*\|/.test(line)) continue;
    const cells = line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim());
    const names: string[] = [];
    for (const token of (cells[0] ?? '').matchAll(/`([A-Z_][A-Z0-9_]*)`/g)) {
      const t = token[1] ?? '';
      const prev = names.at(-1);
      names.push(t.startsWith('_') && prev ? prev.replace(/_[A-Z0-9]+$/, '') + t : t);
    }
    rows.push({ names, cells });
  }
  return rows;
}

/**
 * The configuration table. A variable that src/config.ts reads but neither README.md nor EXTRA_ENV
 * describes is still listed (with its accepted values) and reported in `undescribed`: the docs test
 * fails on it, the build only warns.
 */
export function renderEnv(
  configSource: string,
  readme: string,
): { markdown: string; names: string[]; undescribed: string[] } {
  const vars = parseConfigSchema(configSource);
  const known = new Set(vars.map((v) => v.name));
  const rows = parseReadmeConfig(readme);
  for (const row of rows) {
    for (const n of row.names) {
      if (!known.has(n))
        throw new Error(`README.md documents ${n}, which src/config.ts does not read: update README.md`);
    }
  }
  const covered = new Set(rows.flatMap((r) => r.names));
  const undescribed = vars.filter((v) => !covered.has(v.name) && !EXTRA_ENV[v.name]).map((v) => v.name);
  const accepted = (names: string[]) =>
    names
      .map((n) => `${names.length > 1 ? `${code(n)}: ` : ''}${vars.find((v) => v.name === n)?.accepted ?? ''}`)
      .join('<br>');
  const out: string[][] = [];
  for (const row of rows) {
    out.push([row.cells[0] ?? '', row.cells[1] ?? '', accepted(row.names), row.cells[2] ?? '']);
  }
  for (const v of vars) {
    if (covered.has(v.name)) continue;
    const extra = EXTRA_ENV[v.name];
    out.push(
      extra
        ? [code(v.name), inline(extra[0]), accepted([v.name]), extra[1]]
        : [code(v.name), '', accepted([v.name]), '_not described in README.md yet_'],
    );
  }
  const markdown = [
    generatedNote('docs/scripts/tables.ts from src/config.ts and README.md'),
    '',
    table(['variable', 'default', 'accepted (from the zod schema)', 'meaning'], out),
  ].join('\n');
  return { markdown, names: vars.map((v) => v.name), undescribed };
}

export function renderErrors(): string {
  const entries = Object.entries(ERRORS).sort((a, b) => a[1].status - b[1].status);
  const statuses = [...new Set(entries.map(([, e]) => e.status))];
  const described = errorResponses(...statuses) as Record<number, { description: string }>;
  return [
    generatedNote('docs/scripts/tables.ts from src/http/errors.ts'),
    '',
    table(
      ['status', '`detail.error_type`', 'when'],
      // A validation error's detail is the FastAPI-style list, whose entries carry their own `type`.
      entries.map(([name, e]) => [
        String(e.status),
        name === 'VALIDATION' ? '(a `detail` list: `[{loc, msg, type, input}]`)' : code(e.type),
        inline(e.when),
      ]),
    ),
    '',
    'What the OpenAPI document says about each status:',
    '',
    table(
      ['status', 'meaning'],
      statuses
        .filter((s) => described[s]?.description !== 'Error')
        .map((s) => [String(s), inline(described[s]?.description ?? '')]),
    ),
  ].join('\n');
}

export function renderRateLimits(): string {
  const window = (s: number) => (s % 3600 === 0 ? `${s / 3600} h` : `${s / 60} min`);
  return [
    generatedNote('docs/scripts/tables.ts from src/http/middleware/rate-limit.ts'),
    '',
    table(
      [
        'path under `/control/v1/auth`',
        'action',
        'per client IP (every attempt)',
        'per account and IP',
        'per account (the email in the body)',
      ],
      Object.entries(DEFAULT_AUTH_RATE_RULES).map(([p, r]) => [
        code(p),
        inline(r.what),
        `${r.ip.points} per ${window(r.ip.durationS)}`,
        r.pair
          ? `${r.pair.points} per ${window(r.pair.durationS)}${r.pairCountsFailuresOnly ? ' failed (a success clears them)' : ''}`
          : '-',
        r.account
          ? `${r.account.points} per ${window(r.account.durationS)}`
          : r.slowdown
            ? `never refused: after ${r.slowdown.freeFailures} failures in ${window(r.slowdown.durationS)}, a pause of ${r.slowdown.baseDelayMs / 1000} s doubling to ${r.slowdown.maxDelayMs / 1000} s`
            : '-',
      ]),
    ),
  ].join('\n');
}

export function renderModels(): string {
  return [
    generatedNote('docs/scripts/tables.ts from src/models/catalog.ts and src/domain/systemone.ts'),
    '',
    table(
      ['`BRIER_MODEL` / `models pull` name', 'engine', 'model', 'size', 'licence'],
      MODEL_CATALOG.map((e) => [
        code(e.name),
        e.engine,
        inline(e.title),
        e.engine === 'gguf' ? inline(e.approxSize) : 'ships with Brier',
        inline(e.licence),
      ]),
    ),
    '',
    `Model names a request may send: ${MODEL_ALIASES.map((a) => code(a)).join(', ')}, or the exact versioned id that \`GET /v1/models\` reports.`,
  ].join('\n');
}

export function renderLimits(): string {
  return [
    generatedNote('docs/scripts/tables.ts from src/routes/v1/systemone/protocol.ts'),
    '',
    table(
      ['limit', 'value', 'error'],
      [
        ['body of `/v1/systemone` and the playground', '`BRIER_MAX_BODY_BYTES` (default 1 MiB)', '413'],
        [
          'body of every other route (sign-up, sign-in, keys)',
          '`BRIER_CONTROL_MAX_BODY_BYTES` (default 16 KiB)',
          '413',
        ],
        ['body media type', '`application/json` (or `+json`)', '415'],
        ['JSON nesting, the body being level 1', `${MAX_JSON_DEPTH} levels`, '400'],
        ['a key named `__proto__`, anywhere in a body', 'refused', '400'],
        ['questions per request', `1 to ${MAX_QUESTIONS}`, '422 when empty, 400 when over'],
        ['question id', `at most ${MAX_QUESTION_ID_CHARS} characters`, '422'],
        [
          '`choice` labels',
          `${MIN_CHOICE_OPTIONS} to ${MAX_CHOICE_OPTIONS}, each 1 to ${MAX_LABEL_CHARS} characters`,
          '400 (count), 422 (length)',
        ],
        ['`score` levels', `${MIN_SCORE_LEVELS} to ${MAX_SCORE_LEVELS}`, '400'],
        ['`model`', `at most ${MAX_MODEL_CHARS} characters`, '422'],
        [
          'characters, before any tokenizer runs',
          `${MAX_CHARS_PER_TOKEN} per token of \`input_limit\` (state; state plus the longest question) and of \`context_limit\` (everything)`,
          '400 `max_tokens_exceeded`',
        ],
        ...Object.entries(AUTH_FIELD_LIMITS).map(([field, limit]) => [
          `auth field ${code(field)}`,
          `at most ${limit} characters`,
          '400',
        ]),
      ],
    ),
  ].join('\n');
}

export function readEnv(root = ROOT): ReturnType<typeof renderEnv> {
  const read = (p: string) => fs.readFileSync(path.join(root, p), 'utf8');
  return renderEnv(read('src/config.ts'), read('README.md'));
}

export function renderTables(root = ROOT): GeneratedFile[] {
  const env = readEnv(root);
  if (env.undescribed.length > 0) {
    console.warn(
      `docs: warning: src/config.ts reads ${env.undescribed.join(', ')}, which README.md's configuration table does not describe (the docs test fails until it does)`,
    );
  }
  return [
    { file: '_generated/env.md', content: env.markdown },
    { file: '_generated/errors.md', content: renderErrors() },
    { file: '_generated/rate-limits.md', content: renderRateLimits() },
    { file: '_generated/models.md', content: renderModels() },
    { file: '_generated/limits.md', content: renderLimits() },
  ];
}

export function generateTables(docsDir = DOCS_DIR): void {
  writeFiles(docsDir, renderTables());
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  generateTables();
  console.log('docs: configuration, error, rate-limit and model tables');
}
