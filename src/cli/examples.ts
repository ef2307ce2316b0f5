import fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { createExampleStore } from '../domain/examples.ts';
import { parseLabelledJsonl, UPLOAD_LIMITS } from '../systemone/examples.ts';
import type { CliIo } from './keys.ts';
import { onAccount } from './on-account.ts';

const USAGE = `usage:
  brier examples upload --email <email> <file.jsonl>   store labelled examples (one JSON object per line: state, questions, labels)
  brier examples list --email <email>                  the account's question templates and their example counts`;

/**
 * `brier examples ...`: the same validation and limits as POST /control/v1/examples, on the local
 * database (like `brier keys`). Returns the exit code.
 */
export async function runExamplesCommand(argv: string[], config: Config, io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  let parsed: { values: { email?: string }; positionals: string[] };
  try {
    parsed = parseArgs({ args: rest, options: { email: { type: 'string' } }, allowPositionals: true });
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
  return onAccount(config, email, io, async (db, account) => {
    const examples = createExampleStore(db);
    if (sub === 'upload') {
      const rows = parseLabelledJsonl(text);
      const list = rows.flatMap((r) =>
        r.questions.map((q) => ({
          templateId: q.template.id,
          type: q.template.type,
          question: q.template.canonical,
          state: r.state,
          label: q.label,
        })),
      );
      const stored = await examples.add(account.id, list);
      const templates = new Set(list.map((e) => e.templateId)).size;
      io.stdout(
        `Stored ${stored.added} labelled questions from ${rows.length} rows (${templates} templates) for ${account.email}; the account has ${stored.total}.`,
      );
    } else {
      const { total, templates } = await examples.summary(account.id);
      for (const t of templates) {
        const q = JSON.parse(t.question) as { instructions?: unknown };
        const what = typeof q.instructions === 'string' ? q.instructions : JSON.stringify(q.instructions ?? null);
        io.stdout(`${t.id}\t${t.type}\t${t.examples} examples (${t.outcomes} outcomes)\t${what.slice(0, 80)}`);
      }
      io.stdout(`${total} labelled questions in ${templates.length} templates`);
    }
    return 0;
  });
}
