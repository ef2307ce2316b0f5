import type { Llama } from 'node-llama-cpp';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';

/** node-llama-cpp's prebuilt CPU binary from npm: never downloaded or built, logging errors only. */
export function loadCpuLlama(threads: number): Promise<Llama> {
  return getLlama({
    gpu: false,
    build: 'never',
    usePrebuiltBinaries: true,
    skipDownload: true,
    progressLogs: false,
    logLevel: LlamaLogLevel.error,
    maxThreads: threads,
  });
}
