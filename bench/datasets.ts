/** The labelled sets of ../shared/data/decisions as the benchmarks read them (read from there, never copied). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../src/training/data.ts';

export interface SharedRow {
  state: unknown;
  question: unknown;
  label: unknown;
}

/** All rows of ../shared/data/decisions/<name>.jsonl; `bench` names the benchmark in the error when it is absent. */
export function loadDataset(name: string, bench: string): SharedRow[] {
  const file = join(REPO_ROOT, '..', 'shared', 'data', 'decisions', `${name}.jsonl`);
  if (!existsSync(file)) throw new Error(`${file} is absent: ${bench} needs ../shared/data/decisions`);
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as SharedRow);
}
