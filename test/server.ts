import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface RunningServer {
  url: string;
  env: Record<string, string>;
  logs: string[];
  /** Runs the CLI against the same database; resolves with stdout lines. */
  cli(args: string[]): Promise<string[]>;
  /** Creates an account and key through the CLI; returns the key (the CLI's last line). */
  createKey(email: string): Promise<string>;
  /** SIGTERM, then waits for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** Sends `signal` (SIGKILL: a crash) and resolves with the exit code once the process has exited (null: killed by a signal). */
  kill(signal: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the real server (`node src/main.ts`) on a loopback port with its own data dir; `root`
 * runs another checkout's server (a benchmark's baseline).
 */
export async function startServer(
  env: Record<string, string> = {},
  timeoutMs = 60_000,
  root = ROOT,
): Promise<RunningServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-server-'));
  const fullEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dataDir,
    BRIER_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    BRIER_USAGE_FLUSH_MS: '100',
    ...env,
  };
  const child: ChildProcess = spawn(process.execPath, [path.join(root, 'src/main.ts')], {
    env: fullEnv,
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let exited = false;
  const exit = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exited = true;
      resolve(code);
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not listen within ${timeoutMs} ms:\n${logs.join('\n')}`)),
      timeoutMs,
    );
    // A fixed port with a quiet log level (benchmarks): listening is seen by polling, not in the log.
    const fixed = fullEnv.PORT !== '0' && /^(warn|error|fatal|silent)$/.test(fullEnv.LOG_LEVEL ?? '');
    if (fixed) {
      const poll = setInterval(() => {
        void fetch(`http://127.0.0.1:${fullEnv.PORT}/healthz`).then(
          () => {
            clearInterval(poll);
            clearTimeout(timer);
            resolve(`http://127.0.0.1:${fullEnv.PORT}`);
          },
          () => undefined,
        );
      }, 100);
      void exit.then(() => clearInterval(poll));
    }
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl = buffer.indexOf('\n');
      while (nl >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        logs.push(line);
        const m = /"url":"(http:\/\/[^"]+)"/.exec(line);
        if (m?.[1]) {
          clearTimeout(timer);
          resolve(m[1]);
        }
        nl = buffer.indexOf('\n');
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (c: Buffer) => logs.push(c.toString()));
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${logs.join('\n')}`));
    });
  });

  async function cli(args: string[]): Promise<string[]> {
    const p = spawn(process.execPath, [path.join(root, 'src/cli.ts'), ...args], {
      env: fullEnv,
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    p.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => p.once('exit', resolve));
    if (code !== 0) throw new Error(`brier ${args.join(' ')} exited ${code}: ${err}`);
    return out.trimEnd().split('\n');
  }

  return {
    url,
    env: fullEnv,
    logs,
    cli,
    async createKey(email) {
      const lines = await cli(['keys', 'create', '--email', email]);
      return lines.at(-1) ?? '';
    },
    async kill(signal) {
      if (!exited) child.kill(signal);
      return exit;
    },
    async stop() {
      if (!exited) child.kill('SIGTERM');
      const code = await exit;
      fs.rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}

/** Waits until /healthz answers 200. */
export async function waitHealthy(url: string, timeoutMs = 120_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const res = await fetch(`${url}/healthz`).catch(() => undefined);
    if (res?.status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} not healthy within ${timeoutMs} ms`);
}
