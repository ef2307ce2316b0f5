import type { Config } from '../config.ts';
import { migrate } from '../db/migrate.ts';
import { type Db, openDb } from '../db/open.ts';
import { type Account, createAccountService } from '../domain/accounts.ts';
import { isDomainError } from '../lib/errors.ts';
import type { CliIo } from './keys.ts';

/**
 * What every account command of the CLI does around its own work: opens the local database
 * (migrated), finds the account of `email` (or creates it, verified, unless `create` is false: then
 * an unknown address is refused, exit 1, with `refusal` telling how to create it), runs `work`, and
 * closes the database. A refusal (a domain error) is printed with its first 20 issues and exits 1.
 * Returns the exit code.
 */
export async function onAccount(
  config: Config,
  email: string,
  io: CliIo,
  work: (db: Db, account: Account) => Promise<number>,
  options: { create: boolean; refusal?: string } = { create: true },
): Promise<number> {
  const db = await openDb(config.databaseUrl);
  try {
    await migrate(db);
    const accounts = createAccountService(db);
    const account = options.create ? await accounts.ensure(email) : await accounts.byEmail(email);
    if (!account) {
      io.stderr(`no account has the email ${email}${options.refusal ? `: ${options.refusal}` : ''}`);
      return 1;
    }
    return await work(db, account);
  } catch (e) {
    if (isDomainError(e)) {
      io.stderr(e.message);
      for (const issue of (e.issues ?? []).slice(0, 20)) io.stderr(`  ${issue.msg}`);
      return 1;
    }
    throw e;
  } finally {
    await db.close();
  }
}
