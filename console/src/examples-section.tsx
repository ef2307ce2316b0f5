/** The teach page's labelled examples: the upload form (JSON Lines, or CSV for one question) and the templates stored. */
import { type FormEvent, useState } from 'react';
import { api, type ExampleSummary, isApiError, uploadExamples } from './api.ts';
import {
  type CsvQuestion,
  csvToJsonl,
  describeQuestion,
  inCsvTerms,
  type PageMessages,
  type QuestionType,
} from './teach-model.ts';
import { Field, formatNumber } from './ui.tsx';

export function ExamplesSection(props: {
  examples: ExampleSummary | null;
  messages: PageMessages;
  onChanged: () => Promise<void>;
}) {
  const { examples, messages, onChanged } = props;
  const [file, setFile] = useState<File | null>(null);
  const [question, setQuestion] = useState<CsvQuestion>({ type: 'choice', instructions: '', options: '' });
  const [busy, setBusy] = useState(false);
  const isCsv = file?.name.toLowerCase().endsWith('.csv') ?? false;

  async function upload(e: FormEvent) {
    e.preventDefault();
    messages.clear();
    if (!file) {
      messages.error('Choose a JSON Lines (.jsonl) or CSV (.csv) file first.');
      return;
    }
    setBusy(true);
    try {
      const text = await file.text();
      const body = isCsv ? csvToJsonl(text, question).jsonl : text;
      const result = await uploadExamples(body);
      messages.notice(
        `Stored ${formatNumber(result.added)} labelled questions from ${formatNumber(result.rows)} rows; the account has ${formatNumber(result.total)}.`,
      );
      await onChanged();
    } catch (err) {
      const message = err instanceof Error ? err.message : 'the upload failed';
      const list = isApiError(err) ? err.issues.map((i) => i.msg) : [];
      messages.error(isCsv ? inCsvTerms(message) : message, isCsv ? list.map(inCsvTerms) : list);
    } finally {
      setBusy(false);
    }
  }

  async function removeTemplate(id: string) {
    try {
      await api(`/control/v1/examples/${encodeURIComponent(id)}`, { method: 'DELETE' });
      await onChanged();
    } catch (err) {
      messages.error(isApiError(err) ? err.message : 'could not delete the examples');
    }
  }

  return (
    <>
      <h2>Labelled examples</h2>
      <form onSubmit={upload} className="playground">
        <Field
          label="Examples file"
          hint="JSON Lines: one {state, questions, labels} object per line. CSV: a header with state and label columns, for the question below."
        >
          {(a11y) => (
            <input
              {...a11y}
              type="file"
              accept=".jsonl,.ndjson,.csv,.txt"
              onChange={(e) => setFile(e.target.files?.[0] ?? null)}
            />
          )}
        </Field>
        {isCsv ? (
          <fieldset className="question">
            <legend>The question each CSV row answers</legend>
            <Field label="Question type">
              {(a11y) => (
                <select
                  {...a11y}
                  value={question.type}
                  onChange={(e) => setQuestion({ ...question, type: e.target.value as QuestionType })}
                >
                  <option value="choice">choice</option>
                  <option value="noul">noul (yes/no)</option>
                  <option value="score">score</option>
                </select>
              )}
            </Field>
            <Field label="Instructions">
              {(a11y) => (
                <input
                  {...a11y}
                  value={question.instructions}
                  onChange={(e) => setQuestion({ ...question, instructions: e.target.value })}
                />
              )}
            </Field>
            {question.type !== 'noul' ? (
              <Field
                label={question.type === 'choice' ? 'Labels, one per line' : 'Levels, lowest first, one per line'}
                hint={question.type === 'choice' ? 'label, or label: description' : undefined}
              >
                {(a11y) => (
                  <textarea
                    {...a11y}
                    rows={4}
                    value={question.options}
                    onChange={(e) => setQuestion({ ...question, options: e.target.value })}
                  />
                )}
              </Field>
            ) : null}
          </fieldset>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Uploading…' : 'Upload examples'}
        </button>
      </form>

      {examples && examples.templates.length > 0 ? (
        <div className="table-wrap stack">
          <table>
            <caption>
              {formatNumber(examples.total)} labelled questions (at most {formatNumber(examples.limits.per_account)}); a
              template needs 20 to be fitted
            </caption>
            <thead>
              <tr>
                <th scope="col">Question</th>
                <th scope="col">Type</th>
                <th scope="col">Examples</th>
                <th scope="col">Labels</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {examples.templates.map((t) => (
                <tr key={t.id}>
                  <th scope="row">{describeQuestion(t.question)}</th>
                  <td data-label="Type">{t.type}</td>
                  <td className="text" data-label="Examples">
                    {formatNumber(t.examples)}
                    {t.outcomes > 0 ? ` (${formatNumber(t.outcomes)} outcomes)` : ''}
                    {t.teacher_labels > 0 ? `, ${formatNumber(t.teacher_labels)} labelled by a teacher` : ''}
                  </td>
                  <td className="text" data-label="Labels">
                    {Object.entries(t.labels)
                      .map(([l, n]) => `${l}: ${n}`)
                      .join(', ')}
                  </td>
                  <td className="actions">
                    <button
                      type="button"
                      className="danger small"
                      aria-label={`Delete the examples of ${describeQuestion(t.question)}`}
                      onClick={() => void removeTemplate(t.id)}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : examples ? (
        <p className="empty">No labelled examples yet.</p>
      ) : null}
    </>
  );
}
