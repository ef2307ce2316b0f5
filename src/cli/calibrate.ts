/**
 * `brier models calibrate`: runs the model of BRIER_MODEL (or --model) as it comes on a labelled
 * calibration set (the shipped one by default), fits its calibration per question type
 * (src/training/model-calibration.ts), prints before/after per type and per source set, and writes
 * `<BRIER_DATA_DIR>/calibration/<key>.json`, which the engine reads when it next loads.
 *
 * The model's raw answers are kept beside it (`<key>.answers.jsonl`, by row id and a hash of the row's
 * request and the temperature) so that a second run, or a run on more rows, asks the model only what it
 * has not answered yet; an edited row is asked again (--fresh: ask all).
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { calibrationPath } from '../engines/calibrated.ts';
import { calibrationDir, calibrationKeyOf, createRawEngine } from '../engines/create.ts';
import {
  calibrationFile,
  collectRawAnswers,
  fitModelCalibration,
  formatCalibrationReport,
  readCalibrationSet,
  SHIPPED_CALIBRATION_SET,
  selectRows,
} from '../training/model-calibration.ts';
import type { CliIo } from './keys.ts';

export const CALIBRATE_USAGE = `usage: npm run brier -- models calibrate [options]
  Runs the model of BRIER_MODEL (a .gguf path, a pulled catalog name, an upstream URL) on a labelled
  calibration set, fits a temperature and a mix with the uniform answer per question type, keeping
  every source set at or below the uniform answer's Brier held out, prints before/after and writes
  $BRIER_DATA_DIR/calibration/<key>.json (read when the server next starts).

  --model SPEC     the model instead of BRIER_MODEL
  --set FILE       a calibration set (JSON Lines: id, set, state, question, label); default the shipped one
  --per-set N      only the first N rows of each source set
  --sets A,B       only these source sets
  --fresh          ask the model every row again (default: reuse the answers kept from earlier runs)
  --dry-run        print the report, write nothing`;

export interface CalibrateIo extends CliIo {
  signal?: AbortSignal;
  now?: () => Date;
  /** Milliseconds, for the time estimate (default performance.now). */
  clock?: () => number;
}

/**
 * Seconds a row takes until this model is measured: SmolLM2-135M-Instruct on one CPU thread read the
 * 360-row shipped set in 1,776 s (DEVELOPERS.md, issue 34). A bigger model is slower, an upstream
 * server usually faster; the estimate is replaced by a measured one after MEASURE_AFTER rows.
 */
export const DEFAULT_SECONDS_PER_ROW = 4.9;
const MEASURE_AFTER = 3;

/** A duration as an estimate reads: "40 s", "29 min", "2.5 h". */
export function roughDuration(seconds: number): string {
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

export async function runCalibrateCommand(argv: readonly string[], config: Config, io: CalibrateIo): Promise<number> {
  let values: {
    model?: string;
    set?: string;
    'per-set'?: string;
    sets?: string;
    fresh?: boolean;
    'dry-run'?: boolean;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        model: { type: 'string' },
        set: { type: 'string' },
        'per-set': { type: 'string' },
        sets: { type: 'string' },
        fresh: { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        help: { type: 'boolean' },
      },
      allowPositionals: false,
    }));
  } catch (e) {
    io.stderr(`${e instanceof Error ? e.message : String(e)}\n${CALIBRATE_USAGE}`);
    return 2;
  }
  if (values.help) {
    io.stdout(CALIBRATE_USAGE);
    return 0;
  }
  const perSet = values['per-set'] === undefined ? undefined : Number(values['per-set']);
  if (perSet !== undefined && !(Number.isInteger(perSet) && perSet >= 1 && perSet <= 100_000)) {
    io.stderr(`--per-set: a whole number from 1 to 100000, got ${values['per-set']}\n${CALIBRATE_USAGE}`);
    return 2;
  }
  const cfg: Config = { ...config, model: values.model ?? config.model };
  let keyOf: ReturnType<typeof calibrationKeyOf>;
  try {
    keyOf = calibrationKeyOf(cfg);
  } catch (e) {
    io.stderr(e instanceof Error ? e.message : String(e));
    return 2;
  }
  if (keyOf === null) {
    io.stderr(
      `${cfg.model ?? 'the embedded model'}: needs no calibration file (brier-lite is calibrated by its training; a gateway's workers calibrate their own models)`,
    );
    return 2;
  }
  const setPath = values.set === undefined ? SHIPPED_CALIBRATION_SET : resolve(values.set);
  if (!existsSync(setPath)) {
    io.stderr(`${setPath}: no such file`);
    return 1;
  }
  let set: ReturnType<typeof readCalibrationSet>;
  try {
    set = readCalibrationSet(setPath);
  } catch (e) {
    io.stderr(`${setPath}: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  const rows = selectRows(
    set.rows,
    perSet,
    values.sets?.split(',').map((s) => s.trim()),
  );
  if (rows.length === 0) {
    io.stderr(`${setPath}: no rows selected`);
    return 1;
  }

  const engine = await createRawEngine(cfg);
  try {
    io.stderr(`loading ${cfg.model}...`);
    await engine.load();
    const key = await keyOf(engine);
    const dir = calibrationDir(cfg);
    const cachePath = join(dir, `${key}.answers.jsonl`);
    // A kept answer is reused only for the same question on the same state at the same temperature
    // (`h`): editing a row of the set, or changing BRIER_MODEL_TEMPERATURE, asks the model again.
    const fingerprint = (row: (typeof rows)[number]) =>
      createHash('sha256')
        .update(JSON.stringify([row.request, cfg.modelTemperature]))
        .digest('hex');
    const kept = new Map<string, { h: string; p: number[] }>();
    if (!values.fresh && existsSync(cachePath)) {
      for (const line of readFileSync(cachePath, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        try {
          const a = JSON.parse(line) as { id: string; h: string; p: number[] };
          if (typeof a.id === 'string' && typeof a.h === 'string' && Array.isArray(a.p)) kept.set(a.id, a);
        } catch {
          // a line cut by an interrupted run: asked again
        }
      }
    }
    const cached = new Map<string, number[]>();
    const fingerprints = new Map(rows.map((r) => [r.id, fingerprint(r)]));
    for (const [id, h] of fingerprints) {
      const a = kept.get(id);
      if (a?.h === h) cached.set(id, a.p);
    }
    const asked = rows.filter((r) => !cached.has(r.id)).length;
    io.stderr(`${rows.length} rows (${asked} to ask the model, ${rows.length - asked} kept from an earlier run)`);
    if (asked > 0) {
      io.stderr(
        `estimate: about ${roughDuration(asked * DEFAULT_SECONDS_PER_ROW)} at ${DEFAULT_SECONDS_PER_ROW} s a row (a stated default: SmolLM2-135M-Instruct on one CPU thread; measured on this model after ${Math.min(MEASURE_AFTER, asked)} rows)`,
      );
    }
    if (!values['dry-run']) mkdirSync(dir, { recursive: true });
    const clock = io.clock ?? (() => performance.now());
    const started = clock();
    let askedDone = 0;
    let perRow = DEFAULT_SECONDS_PER_ROW;
    const answers = await collectRawAnswers(engine, rows, {
      signal: io.signal,
      cached,
      onAnswer: (a, done) => {
        const elapsed = (clock() - started) / 1000;
        if (!cached.has(a.id)) {
          if (!values['dry-run'])
            appendFileSync(cachePath, `${JSON.stringify({ id: a.id, h: fingerprints.get(a.id), p: a.p })}\n`);
          askedDone++;
          // Kept answers cost nothing: the rate is the asked rows' time.
          if (askedDone >= Math.min(MEASURE_AFTER, asked)) perRow = elapsed / askedDone;
          if (askedDone === Math.min(MEASURE_AFTER, asked) && askedDone < asked) {
            io.stderr(
              `measured: ${perRow.toFixed(2)} s a row over the first ${askedDone} rows; about ${roughDuration((asked - askedDone) * perRow)} for the ${asked - askedDone} left`,
            );
          }
        }
        if (done % 20 === 0 || done === rows.length) {
          const left = asked - askedDone;
          const eta = left > 0 ? `, about ${roughDuration(left * perRow)} left` : '';
          io.stderr(`  ${done}/${rows.length} rows, ${elapsed.toFixed(0)} s${eta}`);
        }
      },
    });
    const fit = fitModelCalibration(answers);
    const file = calibrationFile(
      key,
      cfg.model ?? '',
      {
        source: values.set === undefined ? 'shipped' : 'file',
        name: values.set === undefined ? 'models/calibration-set/calibration-set.jsonl' : setPath,
        sha256: set.sha256,
        rows: rows.length,
      },
      fit,
      io.now?.() ?? new Date(),
    );
    io.stdout(formatCalibrationReport(fit.report));
    io.stdout('');
    for (const [type, p] of Object.entries(fit.types)) {
      io.stdout(
        `${type}: temperature ${p.temperature.toFixed(3)}, uniform weight ${p.alpha.toFixed(2)} (floor ${p.alpha_floor.toFixed(2)})`,
      );
    }
    const out = calibrationPath(dir, key);
    if (values['dry-run']) {
      io.stdout(`(dry run: ${out} not written)`);
      return 0;
    }
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(`${out}.tmp`, `${JSON.stringify(file, null, 2)}\n`);
    renameSync(`${out}.tmp`, out);
    io.stdout(`wrote ${out}: the server reads it when it next starts`);
    return 0;
  } catch (e) {
    if (io.signal?.aborted) {
      io.stderr('interrupted: the answers so far are kept for the next run');
      return 130;
    }
    io.stderr(e instanceof Error ? e.message : String(e));
    return 1;
  } finally {
    await engine.close();
  }
}
