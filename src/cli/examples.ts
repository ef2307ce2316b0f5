import fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { createExampleStore, examplesOf } from '../domain/examples.ts';
import { counted } from '../lib/plural.ts';
import { parseLabelledJsonl, UPLOAD_LIMITS } from '../systemone/examples.ts';
import type { CliIo } from './keys.ts';
import { onAccount } from './on-account.ts';

const USAGE = `usage:
  brier examples upload --email <email> [--create-account] <file.jsonl>
      store labelled examples (one JSON object per line: state, questions, labels) in the account of
      <email>; rows an earlier upload stored are skipped (counted as duplicates). An unknown email is
      refused unless --create-account creates its account (verified: you vouch for the address)
  brier examples list --email <email>   the account's question templates and their example counts`;

/**
 * `brier examples ...`: the same validation and limits as POST /control/v1/examples, on the local
 * database (like `brier keys`). Returns the exit code.
 */
export async function runExamplesCommand(argv: string[], config: Config, io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  let parsed: { values: { email?: string; 'create-account'?: boolean }; positionals: string[] };
  try {
    parsed = parseArgs({
      args: rest,
      options: { email: { type: 'string' }, 'create-account': { type: 'boolean' } },
      allowPositionals: true,
    });
  } catch (e) {
    io.stderr(`${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
    return 2;
  }
  const { email } = parsed.values;
  const file = parsed.positionals[0];
  if (!sub || !['upload', 'list'].includes(sub) || !email || !/^[^@\s]+@[^@\s]+$/.test(email)) {
    io.stderr(USAGE);
    return 2;
  }
  if (sub === 'upload' && !file) {
    io.stderr(`upload: name the JSON Lines file\n${USAGE}`);
    return 2;
  }
  let text = '';
  if (sub === 'upload' && file) {
    let size: number;
    try {
      size = fs.statSync(file).size;
    } catch {
      io.stderr(`${file}: no such file`);
      return 1;
    }
    if (size > UPLOAD_LIMITS.maxBytes) {
      io.stderr(`${file}: ${size} bytes; an upload has at most ${UPLOAD_LIMITS.maxBytes} (the limit): split the file`);
      return 1;
    }
    text = fs.readFileSync(file, 'utf8');
  }
  const create = sub === 'upload' && parsed.values['create-account'] === true;
  const refusal =
    sub === 'upload'
      ? 'nothing was stored. Check the address, or add --create-account to create its account'
      : 'check the address';
  return onAccount(
    config,
    email,
    io,
    async (db, account) => {
      const examples = createExampleStore(db);
      if (sub === 'upload') {
        const rows = parseLabelledJsonl(text);
        const stored = await examples.add(account.id, examplesOf(rows));
        const skipped =
          stored.duplicates > 0 ? `, skipped ${counted(stored.duplicates, 'duplicate')} of earlier uploads` : '';
        io.stdout(
          `Stored ${counted(stored.added, 'labelled question')} from ${counted(rows.length, 'row')} (${counted(stored.templates.size, 'template')})${skipped} for ${account.email}; the account has ${stored.total}.`,
        );
      } else {
        const { total, templates } = await examples.summary(account.id);
        for (const t of templates) {
          const q = JSON.parse(t.question) as { instructions?: unknown };
          const what = typeof q.instructions === 'string' ? q.instructions : JSON.stringify(q.instructions ?? null);
          io.stdout(
            `${t.id}\t${t.type}\t${counted(t.examples, 'example')} (${counted(t.outcomes, 'outcome')})\t${what.slice(0, 80)}`,
          );
        }
        io.stdout(`${counted(total, 'labelled question')} in ${counted(templates.length, 'template')}`);
      }
      return 0;
    },
    { create, refusal },
  );
}
