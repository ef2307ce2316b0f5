import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { createJobQueue } from '../domain/jobs.ts';
import type { CliIo } from './keys.ts';
import { onAccount } from './on-account.ts';

const USAGE = `usage:
  brier jobs list --email <email>                 the account's training jobs, newest first (status, progress, queue position)
  brier jobs cancel --email <email> --id <job id> cancel a queued or running training job`;

/**
 * `brier jobs ...`: an account's training jobs on the local database (like `brier keys`), and
 * cancelling one, as POST /control/v1/training-jobs/{id}/cancel does. Returns the exit code.
 */
export async function runJobsCommand(argv: string[], config: Config, io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  let values: { email?: string; id?: string };
  try {
    values = parseArgs({ args: rest, options: { email: { type: 'string' }, id: { type: 'string' } } }).values;
  } catch (e) {
    io.stderr(`${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
    return 2;
  }
  const { email, id } = values;
  if (!sub || !['list', 'cancel'].includes(sub) || !email || !/^[^@\s]+@[^@\s]+$/.test(email)) {
    io.stderr(USAGE);
    return 2;
  }
  if (sub === 'cancel' && !id) {
    io.stderr(`cancel: name the job (--id job_...)\n${USAGE}`);
    return 2;
  }
  return onAccount(config, email, io, async (db, account) => {
    const jobs = createJobQueue(db);
    if (sub === 'cancel' && id) {
      const job = await jobs.cancel(account.id, id);
      io.stdout(`${job.id} ${job.status}: ${job.message}`);
      return 0;
    }
    const list = await jobs.list(account.id);
    for (const j of list) {
      const outlook = await jobs.outlook(j);
      const where = outlook.position === null ? '' : `\tqueue position ${outlook.position}`;
      io.stdout(`${j.id}\t${j.status}\t${Math.round(j.progress * 100)}%${where}\t${j.message.slice(0, 100)}`);
    }
    io.stdout(`${list.length} training jobs`);
    return 0;
  });
}
