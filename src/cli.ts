/**
 * The `brier` command line (`npm run brier -- <command>`): a second entry point beside main.ts,
 * so it too has side effects (reads argv and env, handles SIGINT, sets the exit code).
 * The commands themselves live in src/cli/ and src/models/ and take their io as arguments.
 */

import { runModelsCommand } from './catalog/cli.ts';
import { runCalibrateCommand } from './cli/calibrate.ts';
import { runDistillCommand } from './cli/distill.ts';
import { runExamplesCommand } from './cli/examples.ts';
import { runJobsCommand } from './cli/jobs.ts';
import { runKeysCommand } from './cli/keys.ts';
import { loadConfig } from './config.ts';

const USAGE = `usage: npm run brier -- <command>
  keys create --email <email> [--name <name>]   create an account if needed and an API key (printed once, last line)
  keys list --email <email>                     list active keys
  keys revoke --email <email> --id <key id>     revoke a key
  examples upload --email <email> [--create-account] <file.jsonl>
                                                store labelled examples (all or nothing; rows stored before are skipped; an
                                                unknown email is refused without --create-account; see docs: Teach Brier your task)
  examples list --email <email>                 the account's question templates and example counts
  jobs list --email <email>                     the account's training jobs (status, progress, queue position)
  jobs cancel --email <email> --id <job id>     cancel a queued or running training job
  distill teachers                              the teachers this server offers (BRIER_TEACHERS)
  distill states --email <email> <file.jsonl>   store unlabelled states for a teacher to label
  distill start --email <email> --teacher <id> --questions <file.json> [--dry-run] [--budget <calls>] ...
                                                queue a distillation job (see docs: Learn from a bigger model)
  models list                                   the model catalog
  models pull <name>                            download a catalog model (resumable, verified)
  models calibrate [--model SPEC] [--per-set N] fit a GGUF or upstream model's calibration on the shipped set (before/after)`;

const [command, ...rest] = process.argv.slice(2);

async function run(): Promise<number> {
  switch (command) {
    case 'keys':
      return runKeysCommand(rest, loadConfig(), {
        stdout: (l) => console.log(l),
        stderr: (l) => console.error(l),
      });
    case 'examples':
      return runExamplesCommand(rest, loadConfig(), {
        stdout: (l) => console.log(l),
        stderr: (l) => console.error(l),
      });
    case 'distill':
      return runDistillCommand(rest, loadConfig(), {
        stdout: (l) => console.log(l),
        stderr: (l) => console.error(l),
      });
    case 'jobs':
      return runJobsCommand(rest, loadConfig(), {
        stdout: (l) => console.log(l),
        stderr: (l) => console.error(l),
      });
    case 'models': {
      const interrupt = new AbortController();
      process.once('SIGINT', () => interrupt.abort());
      if (rest[0] === 'calibrate') {
        return runCalibrateCommand(rest.slice(1), loadConfig(), {
          stdout: (l) => console.log(l),
          stderr: (l) => console.error(l),
          signal: interrupt.signal,
        });
      }
      return runModelsCommand(rest, {
        stdout: process.stdout,
        stderr: process.stderr,
        env: process.env,
        signal: interrupt.signal,
      });
    }
    default:
      console.error(USAGE);
      return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
  }
}

process.exitCode = await run();
