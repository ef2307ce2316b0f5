/**
 * The fitting step of training jobs: src/training/adapter-worker.ts in child processes at the lowest
 * CPU priority (started by path: serving never imports training). A job's templates are dealt to
 * `processes` children, the most costly first to the least loaded (rows x classes), so that they are
 * fitted in parallel where cores allow; their reports come back in the job's template order and their
 * heads in one artifact.
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { AdapterFile } from '../engines/adapters/adapter.ts';
import type { FitMessage, FitReport, FitRequest, FitTemplate } from '../engines/adapters/fit-protocol.ts';

/** The fitting child's module, started by path (never imported here). */
export const FIT_WORKER = fileURLToPath(new URL('../training/adapter-worker.ts', import.meta.url));

export type Fitter = (
  request: FitRequest,
  onProgress: (done: number, message: string) => void,
  signal: AbortSignal,
) => Promise<{ artifact: AdapterFile | null; reports: FitReport[] }>;

/** One child process fitting `request`. */
function fitInChild(
  request: FitRequest,
  onProgress: (done: number, message: string) => void,
  signal: AbortSignal,
): ReturnType<Fitter> {
  return new Promise((resolve, reject) => {
    const child = fork(FIT_WORKER, [], {
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    try {
      if (child.pid) os.setPriority(child.pid, 19);
    } catch {
      // The child lowers its own priority too.
    }
    let settled = false;
    const done = (error: Error | null, value?: Awaited<ReturnType<Fitter>>) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else if (value) resolve(value);
    };
    const onAbort = () => {
      child.kill('SIGKILL');
      done(signal.reason instanceof Error ? signal.reason : new Error('fitting aborted'));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('message', (raw) => {
      const m = raw as FitMessage;
      if (m.type === 'progress') onProgress(m.done, m.message);
      else if (m.type === 'result') done(null, { artifact: m.artifact, reports: m.reports });
      else done(new Error(m.message));
    });
    child.on('error', (error) => done(error));
    child.on('exit', (code, sig) =>
      done(new Error(`the fitting process ended (${sig ?? `exit ${code}`}) before its result`)),
    );
    child.send(request);
  });
}

/** Deals templates to `n` shares, the most costly first to the least loaded; each share in job order. */
export function shareTemplates(templates: readonly FitTemplate[], n: number): FitTemplate[][] {
  const shares = Array.from({ length: Math.max(1, Math.min(n, templates.length)) }, () => ({
    cost: 0,
    items: [] as number[],
  }));
  const cost = (t: FitTemplate) => t.rows.length * Math.max(2, t.labels.length);
  const order = templates
    .map((_, i) => i)
    .sort((a, b) => cost(templates[b] as FitTemplate) - cost(templates[a] as FitTemplate));
  for (const i of order) {
    const least = shares.reduce((a, b) => (b.cost < a.cost ? b : a));
    least.items.push(i);
    least.cost += cost(templates[i] as FitTemplate);
  }
  return shares
    .filter((s) => s.items.length > 0)
    .map((s) => s.items.sort((a, b) => a - b).map((i) => templates[i] as FitTemplate));
}

/**
 * The default fitter: the job's templates fitted by up to `processes` children at once (each at the
 * lowest CPU priority); one child when there is one template or one process.
 */
export function createForkFitter(processes: number): Fitter {
  return async (request, onProgress, signal) => {
    const shares = shareTemplates(request.templates, processes);
    const done = shares.map(() => 0);
    const weight = shares.map((s) => s.length / Math.max(1, request.templates.length));
    const results = await Promise.all(
      shares.map((templates, i) =>
        fitInChild(
          // every child reads all the templates (the account's shared model), fits its share
          { ...request, only: templates.map((t) => t.template) },
          (share, message) => {
            done[i] = share;
            onProgress(
              done.reduce((sum, d, j) => sum + d * (weight[j] ?? 0), 0),
              message,
            );
          },
          signal,
        ),
      ),
    );
    const order = new Map(request.templates.map((t, i) => [t.template, i]));
    const reports = results
      .flatMap((r) => r.reports)
      .sort((a, b) => (order.get(a.template) ?? 0) - (order.get(b.template) ?? 0));
    const heads = results
      .flatMap((r) => r.artifact?.heads ?? [])
      .sort((a, b) => (order.get(a.template) ?? 0) - (order.get(b.template) ?? 0));
    const first = results.find((r) => r.artifact)?.artifact;
    const artifact: AdapterFile | null = first
      ? { ...first, features: results.some((r) => r.artifact?.features) ? request.features : null, heads }
      : null;
    return { artifact, reports };
  };
}

/** Fitting processes per job: the cores shared by the jobs that may run at once. */
export function fitProcesses(concurrency: number, cores = os.availableParallelism()): number {
  return Math.max(1, Math.floor(cores / Math.max(1, concurrency)));
}
