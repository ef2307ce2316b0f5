/**
 * The `brier` command line (`npm run brier -- <command>`): a second entry point beside main.ts,
 * so it too has side effects (reads argv and env, exits). The commands live in src/cli/.
 */
import { runKeysCommand } from './cli/keys.ts';
import { loadConfig } from './config.ts';

const io = { stdout: (l: string) => console.log(l), stderr: (l: string) => console.error(l) };
const [command, ...rest] = process.argv.slice(2);

async function run(): Promise<number> {
  switch (command) {
    case 'keys':
      return runKeysCommand(rest, loadConfig(), io);
    default:
      io.stderr('usage: brier <keys|models> ...   (npm run brier -- keys create --email you@example.com)');
      return 2;
  }
}

process.exitCode = await run();
