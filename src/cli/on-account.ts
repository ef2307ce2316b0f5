import type { Config } from '../config.ts';
import { migrate } from '../db/migrate.ts';
import { type Db, openDb } from '../db/open.ts';
import { type Account, createAccountService } from '../domain/accounts.ts';
import { isDomainError } from '../lib/errors.ts';
import type { CliIo } from './keys.ts';

/**
 * What every account command of the CLI does around its own work: opens the local database
 * (migrated), finds or creates the account of `email`, runs `work`, and closes the database. A
 * refusal (a domain error) is printed with its first 20 issues and exits 1. Returns the exit code.
 */
export async function onAccount(
  config: Config,
  email: string,
  io: CliIo,
  work: (db: Db, account: Account) => Promise<number>,
): Promise<number> {
  const db = await openDb(config.databaseUrl);
  try {
    await migrate(db);
    return await work(db, await createAccountService(db).ensure(email));
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
