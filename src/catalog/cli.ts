/**
 * `npm run brier -- models <list|pull>`: the model catalog on the command line. Pure with respect
 * to its `io` (streams, env, fetch), so that tests run it in-process.
 */
import { basename, dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { CatalogEntry, GgufCatalogEntry } from './catalog.ts';
import {
  DEFAULT_MODEL_NAME,
  defaultModelsDir,
  describeVerification,
  downloadState,
  findModel,
  MODEL_CATALOG,
} from './catalog.ts';
import type { ProgressStream } from './progress.ts';
import { createProgressBar, formatBytes } from './progress.ts';
import type { PullResult } from './pull.ts';
import { isPullError, pullModel } from './pull.ts';

export interface ModelsCommandIo {
  stdout: ProgressStream;
  /** Progress and errors go here. */
  stderr: ProgressStream;
  env: Readonly<Record<string, string | undefined>>;
  fetch?: typeof fetch;
  /** Abort (e.g. on SIGINT): the partial download is kept for the next pull to resume. */
  signal?: AbortSignal;
  /** Replaces the built-in catalog (tests). */
  catalog?: readonly CatalogEntry[];
}

const USAGE = `Usage:
  npm run brier -- models list [--dir DIR]
  npm run brier -- models pull <name> [--dir DIR] [--url URL] [--sha256 HEX]

  list    the model catalog, with what each model is good for and whether it is downloaded
  pull    download a GGUF model (resumes an interrupted download; verifies size and sha256 when known)
  calibrate  fit a GGUF or upstream model's calibration per question type (models calibrate --help)

Options:
  --dir DIR      models directory (default: $BRIER_DATA_DIR/models, BRIER_DATA_DIR defaults to ./data)
  --url URL      download from this URL instead of the catalog's (a mirror); the catalog's size and
                 sha256 are still checked. With a name not in the catalog, downloads that file as is.
  --sha256 HEX   expected sha256 (overrides the catalog's)

Then start Brier with BRIER_MODEL=<name> (unset: ${DEFAULT_MODEL_NAME}, built in).
`;

/**
 * Runs `models ...`; `argv` is what follows `brier` (a leading "models" is optional).
 * Resolves to the exit code: 0 done, 1 failed, 2 bad usage, 130 interrupted.
 */
export async function runModelsCommand(argv: readonly string[], io: ModelsCommandIo): Promise<number> {
  const args = argv[0] === 'models' ? argv.slice(1) : [...argv];
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    io.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const [command, ...rest] = parsed.positionals;
  if (parsed.values.help === true || command === undefined || command === 'help') {
    io.stdout.write(USAGE);
    return 0;
  }
  const catalog = io.catalog ?? MODEL_CATALOG;
  const modelsDir = parsed.values.dir === undefined ? defaultModelsDir(io.env) : resolve(parsed.values.dir);

  if (command === 'list') {
    if (rest.length > 0) return usageError(io, `models list takes no arguments, got: ${rest.join(' ')}`);
    listModels(io, catalog, modelsDir);
    return 0;
  }
  if (command === 'pull') {
    const [name, ...extra] = rest;
    if (name === undefined) return usageError(io, 'models pull needs a model name');
    if (extra.length > 0) return usageError(io, `models pull takes one name, got: ${rest.join(' ')}`);
    return pull(io, catalog, modelsDir, name, parsed.values.url, parsed.values.sha256);
  }
  return usageError(io, `unknown models command: ${command}`);
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      dir: { type: 'string' },
      url: { type: 'string' },
      sha256: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

function usageError(io: ModelsCommandIo, message: string): number {
  io.stderr.write(`error: ${message}\n\n${USAGE}`);
  return 2;
}

function listModels(io: ModelsCommandIo, catalog: readonly CatalogEntry[], modelsDir: string): void {
  const selected = io.env.BRIER_MODEL?.trim() || DEFAULT_MODEL_NAME;
  const selectedEntry = findModel(selected, catalog);
  const out: string[] = [`Models directory: ${modelsDir}`, ''];
  for (const entry of catalog) {
    const mark = entry === selectedEntry ? '*' : ' ';
    const size = entry.engine === 'gguf' ? `about ${entry.approxSize}` : 'built in';
    out.push(`${mark} ${entry.name}  [${entry.engine}, ${size}, ${entry.licence}]  ${statusOf(entry, modelsDir)}`);
    out.push(...wrap(entry.description, 96).map((line) => `    ${line}`));
    if (entry.engine === 'gguf') out.push(`    source: ${entry.url}`, `    checks: ${describeVerification(entry)}`);
    out.push('');
  }
  out.push(
    selectedEntry === undefined
      ? `BRIER_MODEL=${selected} is not a catalog name (a .gguf path or an upstream URL).`
      : `* selected by BRIER_MODEL (${io.env.BRIER_MODEL?.trim() ? `set to ${selected}` : `unset: ${DEFAULT_MODEL_NAME}`})`,
    'Download:  npm run brier -- models pull <name>',
    'Use:       BRIER_MODEL=<name> npm start',
    '',
  );
  io.stdout.write(out.join('\n'));
}

function statusOf(entry: CatalogEntry, modelsDir: string): string {
  const state = downloadState(entry, modelsDir);
  switch (state.state) {
    case 'embedded':
      return 'ready (ships with Brier)';
    case 'downloaded':
      return `downloaded (${formatBytes(state.bytes)})`;
    case 'partial':
      return `partly downloaded (${formatBytes(state.bytes)}; pull resumes)`;
    case 'missing':
      return 'not downloaded';
  }
}

async function pull(
  io: ModelsCommandIo,
  catalog: readonly CatalogEntry[],
  modelsDir: string,
  name: string,
  url: string | undefined,
  sha256: string | undefined,
): Promise<number> {
  const found = findModel(name, catalog);
  if (found?.engine === 'embedded') {
    io.stdout.write(`${found.name} ships with Brier: nothing to download. It is the default (BRIER_MODEL unset).\n`);
    return 0;
  }
  const entry: GgufCatalogEntry | undefined = found;
  if (entry === undefined && url === undefined) {
    const names = catalog.filter((e) => e.engine === 'gguf').map((e) => e.name);
    io.stderr.write(
      `error: unknown model "${name}". Models to pull: ${names.join(', ')}.\n` +
        'To fetch a GGUF that is not in the catalog, give its --url (and --sha256 if you know it).\n',
    );
    return 2;
  }

  const label = entry?.name ?? name;
  const source = url ?? entry?.url ?? '';
  io.stderr.write(
    `Pulling ${label}${entry === undefined ? '' : ` (about ${entry.approxSize})`}\n` +
      `  from ${source}\n  into ${modelsDir}\n` +
      `  checks: ${
        sha256 !== undefined
          ? 'sha256 given with --sha256'
          : entry === undefined
            ? 'none (not a catalog model; give --sha256 to verify)'
            : describeVerification(entry)
      }\n`,
  );

  const bar = createProgressBar({ stream: io.stderr, label });
  let result: PullResult;
  try {
    result = await pullModel({
      entry,
      url,
      sha256,
      destDir: modelsDir,
      fetch: io.fetch,
      signal: io.signal,
      onProgress: (progress) => bar.update(progress),
      onRetry: (error, attempt, delayMs) => {
        bar.finish();
        io.stderr.write(
          `${error.message}\nRetrying in ${Math.round(delayMs / 1000)} s (retry ${attempt}), resuming.\n`,
        );
      },
    });
  } catch (error) {
    bar.finish();
    if (io.signal?.aborted) {
      io.stderr.write('Interrupted. The partial download is kept: run the same command to resume.\n');
      return 130;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`error: ${message}\n`);
    if (isPullError(error) && error.retryable) {
      io.stderr.write('The partial download is kept: run the same command to resume.\n');
    }
    return 1;
  }
  bar.finish();

  const shown = entry?.name ?? basename(result.path);
  const checked =
    result.verified.sha256 && result.verified.size
      ? 'size and sha256 verified'
      : result.verified.sha256
        ? 'sha256 verified'
        : result.verified.size
          ? 'size verified; no sha256 known to check against'
          : 'not verified: no size or sha256 known to check against';
  const lines: string[] = [];
  if (result.status === 'already-present') {
    lines.push(`${shown} is already downloaded (${checked}): ${result.path}`);
  } else {
    lines.push(
      `${result.replaced ? 'Replaced a file that failed verification. ' : ''}` +
        `Downloaded ${shown} (${formatBytes(result.bytes)}${result.status === 'resumed' ? ', resumed' : ''}) ` +
        `to ${result.path}`,
    );
    if (result.sha256 !== undefined) lines.push(`sha256 ${result.sha256} (${checked})`);
  }
  lines.push(`Use it: ${useHint(io, entry, modelsDir, result.path)} npm start`, '');
  io.stdout.write(lines.join('\n'));
  return 0;
}

/** The env that makes `resolveModelSpec` find this file. */
function useHint(io: ModelsCommandIo, entry: GgufCatalogEntry | undefined, modelsDir: string, path: string): string {
  if (entry === undefined) return `BRIER_MODEL=${path}`;
  if (modelsDir === defaultModelsDir(io.env)) return `BRIER_MODEL=${entry.name}`;
  if (basename(modelsDir) === 'models') return `BRIER_DATA_DIR=${dirname(modelsDir)} BRIER_MODEL=${entry.name}`;
  return `BRIER_MODEL=${path}`;
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}
