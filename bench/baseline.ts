/**
 * A benchmark's baseline: the server of another commit, checked out as a git worktree in
 * .cache/bench/baseline-<ref> that shares this checkout's node_modules, so that `--baseline <ref>`
 * can measure before and after in one run, interleaved.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../test/server.ts';

/** The directory of a worktree of `ref` (created once; reused while it exists). */
export function baselineWorktree(ref: string): string {
  const dir = path.join(ROOT, '.cache', 'bench', `baseline-${ref.replace(/[^\w.-]/g, '_')}`);
  if (!existsSync(dir)) {
    mkdirSync(path.dirname(dir), { recursive: true });
    execFileSync('git', ['worktree', 'add', '--detach', dir, ref], { cwd: ROOT, stdio: 'ignore' });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  }
  return dir;
}
