import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { createJobQueue } from '../domain/jobs.ts';
import { createKeyService } from '../domain/keys.ts';
import { createRetention } from '../domain/retention.ts';
import { onAccount } from './on-account.ts';

export interface CliIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
}

const USAGE = `usage:
  brier keys create --email <email> [--name <name>]   create an account if needed and a key; prints the key alone on the last line
  brier keys list --email <email>                     list the account's active keys (prefixes only)
  brier keys revoke --email <email> --id <key id>     revoke a key`;

/** `brier keys ...` for local use until the control plane exists. Returns the exit code. */
export async function runKeysCommand(argv: string[], config: Config, io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  let values: { email?: string; name?: string; id?: string };
  try {
    values = parseArgs({
      args: rest,
      options: { email: { type: 'string' }, name: { type: 'string' }, id: { type: 'string' } },
    }).values;
  } catch (e) {
    io.stderr(`${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
    return 2;
  }
  if (!sub || !['create', 'list', 'revoke'].includes(sub) || !values.email || !/^[^@\s]+@[^@\s]+$/.test(values.email)) {
    io.stderr(
      values.email && !/^[^@\s]+@[^@\s]+$/.test(values.email)
        ? `--email: not an email address: ${values.email}\n${USAGE}`
        : USAGE,
    );
    return 2;
  }
  return onAccount(config, values.email, io, async (db, account) => {
    const keys = createKeyService(db, { maxKeysPerAccount: config.maxKeysPerAccount, cacheTtlMs: 0 });
    if (sub === 'create') {
      const created = await keys.create(account.id, values.name ?? 'cli');
      io.stdout(
        `Created key ${created.id} (${created.prefix}...) for ${account.email}. It is shown once; store it now:`,
      );
      io.stdout(created.key);
    } else if (sub === 'list') {
      for (const k of await keys.list(account.id)) {
        io.stdout(
          `${k.id}\t${k.prefix}...\t${k.name}\tcreated ${new Date(k.createdAt).toISOString()}\tlast used ${k.lastUsedAt ? new Date(k.lastUsedAt).toISOString() : 'never'}`,
        );
      }
    } else {
      if (!values.id) {
        io.stderr(`--id is required\n${USAGE}`);
        return 2;
      }
      if (!(await keys.revoke(account.id, values.id))) {
        io.stderr(`no active key ${values.id} for ${account.email}`);
        return 1;
      }
      // What was retained of the key's requests goes with it.
      const jobs = createJobQueue(db);
      await createRetention(db, {
        onExamplesDeleted: jobs.examplesDeleted,
        onRetainedDeleted: jobs.retainedDeleted,
      }).forgetKey(account.id, values.id);
      io.stdout(`Revoked ${values.id}.`);
    }
    return 0;
  });
}
