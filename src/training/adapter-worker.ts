/**
 * The fitting child process of adapter training jobs: started by path by the job runner
 * (src/jobs/runner.ts) at the lowest CPU priority, it receives one FitRequest over IPC, fits
 * (src/training/adapter-fit.ts), reports progress, sends the result and exits. One job at a time.
 */
import os from 'node:os';
import type { FitMessage, FitRequest } from '../engines/adapters/fit-protocol.ts';
import { adapterFile, fitAdapter } from './adapter-fit.ts';

try {
  os.setPriority(19);
} catch {
  // Not allowed here: the parent has tried too.
}

function send(message: FitMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(message, undefined, undefined, () => resolve());
  });
}

process.once('message', (raw) => {
  const request = raw as FitRequest;
  void (async () => {
    try {
      let last = 0;
      const result = fitAdapter(request.templates, {
        minExamples: request.minExamples,
        distill: request.distill,
        only: request.only,
        prefix: request.prefix,
        onProgress: (done, message) => {
          // At most a few messages a second: progress is shown, not logged.
          const now = Date.now();
          if (now - last < 200 && done < 1) return;
          last = now;
          void send({ type: 'progress', done, message });
        },
      });
      const artifact = result.heads.length > 0 ? adapterFile(request.base, request.features, result.heads) : null;
      await send({ type: 'result', artifact, reports: result.reports });
    } catch (error) {
      await send({ type: 'error', message: error instanceof Error ? error.message : String(error) });
    } finally {
      process.disconnect?.();
    }
  })();
});
