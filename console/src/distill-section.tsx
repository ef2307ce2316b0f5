/**
 * "Learn from a bigger model" (issue 34): unlabelled states uploaded, a teacher picked from those the
 * server offers, the question templates given in System One form, the job's teacher calls shown (a dry
 * run) before it is started. The job then shows in the training jobs list with its progress bar.
 */
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, type DistillEstimate, isApiError, type Teacher, uploadExamples } from './api.ts';
import { Alert, Field, formatNumber } from './ui.tsx';

const EXAMPLE_QUESTIONS = `{
  "team": {"type": "choice", "instructions": "Which team should handle this ticket?",
           "criteria": {"billing": "charges and refunds", "tech": "bugs and outages", "other": null}}
}`;

export function DistillSection({ onQueued }: { onQueued: () => Promise<void> }) {
  const [teachers, setTeachers] = useState<Teacher[] | null>(null);
  const [states, setStates] = useState<number | null>(null);
  const [teacher, setTeacher] = useState('');
  const [questions, setQuestions] = useState(EXAMPLE_QUESTIONS);
  const [source, setSource] = useState<'states' | 'retained'>('states');
  const [budget, setBudget] = useState('');
  const [fallback, setFallback] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [estimate, setEstimate] = useState<DistillEstimate | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      const [t, s] = await Promise.all([
        api<{ data: Teacher[] }>('/control/v1/teachers'),
        api<{ states: number }>('/control/v1/states'),
      ]);
      setTeachers(t.data);
      setStates(s.states);
      setTeacher((current) => current || t.data[0]?.id || '');
    } catch (err) {
      setError(isApiError(err) ? err.message : 'could not load the teachers');
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  async function uploadStates(e: FormEvent) {
    e.preventDefault();
    setError(null);
    if (!file) return setError('Choose a JSON Lines file of {"state": ...} lines first.');
    setBusy(true);
    try {
      const r = await uploadExamples(await file.text(), '/control/v1/states');
      setNotice(`Stored ${formatNumber(r.added)} unlabelled states; the account has ${formatNumber(r.total)}.`);
      await load();
    } catch (err) {
      setError(err instanceof Error ? err.message : 'the upload failed');
    } finally {
      setBusy(false);
    }
  }

  function body(dryRun: boolean) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(questions);
    } catch {
      throw new Error('questions: not valid JSON (a map of question ids to System One questions)');
    }
    return {
      teacher,
      questions: parsed,
      source,
      ...(budget ? { budget: Number(budget) } : {}),
      fallback_threshold: fallback ? Number(fallback) : null,
      dry_run: dryRun,
    };
  }

  async function run(dryRun: boolean) {
    setError(null);
    setNotice(null);
    setBusy(true);
    try {
      if (dryRun) {
        setEstimate(
          (await api<{ estimate: DistillEstimate }>('/control/v1/distillation-jobs', { body: body(true) })).estimate,
        );
      } else {
        const job = await api<{ id: string }>('/control/v1/distillation-jobs', { body: body(false) });
        setNotice(`Distillation job ${job.id} is queued; it shows below with its progress.`);
        setEstimate(null);
        await onQueued();
      }
    } catch (err) {
      setError(err instanceof Error ? err.message : 'could not start the job');
    } finally {
      setBusy(false);
    }
  }

  if (teachers === null) return null;
  return (
    <>
      <h2>Learn from a bigger model</h2>
      <p className="hint">
        A teacher (a model the operator configured) answers your questions about your states; Brier fits an adapter to
        its answers and serves it only where it is closer to the teacher than the base model on states it never saw.
      </p>
      {error ? <Alert>{error}</Alert> : null}
      {notice ? <Alert kind="success">{notice}</Alert> : null}
      {teachers.length === 0 ? (
        <p className="muted">This server offers no teacher (the operator sets BRIER_TEACHERS).</p>
      ) : (
        <>
          <form onSubmit={uploadStates} className="playground">
            <Field
              label="Unlabelled states"
              hint={`JSON Lines: one {"state": ...} per line. Stored: ${formatNumber(states ?? 0)}.`}
            >
              {(a11y) => (
                <input
                  {...a11y}
                  type="file"
                  accept=".jsonl,.ndjson,.txt"
                  onChange={(e) => setFile(e.target.files?.[0] ?? null)}
                />
              )}
            </Field>
            <button type="submit" disabled={busy}>
              Upload states
            </button>
          </form>
          <form
            className="playground"
            onSubmit={(e) => {
              e.preventDefault();
              void run(false);
            }}
          >
            <Field label="Teacher">
              {(a11y) => (
                <select {...a11y} value={teacher} onChange={(e) => setTeacher(e.target.value)}>
                  {teachers.map((t) => (
                    <option key={t.id} value={t.id}>
                      {t.id} ({t.kind}
                      {t.ms_per_call === null ? '' : `, ${Math.round(t.ms_per_call)} ms a call`})
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="States from">
              {(a11y) => (
                <select {...a11y} value={source} onChange={(e) => setSource(e.target.value as 'states' | 'retained')}>
                  <option value="states">uploaded unlabelled states</option>
                  <option value="retained">retained requests</option>
                </select>
              )}
            </Field>
            <Field label="Questions" hint="System One questions by id, as in POST /v1/systemone.">
              {(a11y) => (
                <textarea {...a11y} rows={6} value={questions} onChange={(e) => setQuestions(e.target.value)} />
              )}
            </Field>
            <Field label="Budget (teacher calls)" hint="Empty: one call per state not yet labelled.">
              {(a11y) => (
                <input {...a11y} type="number" min={1} value={budget} onChange={(e) => setBudget(e.target.value)} />
              )}
            </Field>
            <Field
              label="Fallback threshold"
              hint="0 to 1; answers of the adapter less confident than this go to the teacher. Empty: off."
            >
              {(a11y) => (
                <input
                  {...a11y}
                  type="number"
                  min={0}
                  max={1}
                  step={0.05}
                  value={fallback}
                  onChange={(e) => setFallback(e.target.value)}
                />
              )}
            </Field>
            {estimate ? (
              <p className="hint" role="status">
                {formatNumber(estimate.states)} states ({formatNumber(estimate.already_labelled)} already labelled),{' '}
                {estimate.templates} templates: <strong>{formatNumber(estimate.teacher_calls)} teacher calls</strong>{' '}
                (budget {formatNumber(estimate.budget)}), {formatNumber(estimate.teacher_questions)} questions
                {estimate.estimated_seconds === null ? '' : `, about ${formatNumber(estimate.estimated_seconds)} s`}.
              </p>
            ) : null}
            <div className="actions">
              <button type="button" className="secondary" disabled={busy || !teacher} onClick={() => void run(true)}>
                Estimate the calls
              </button>
              <button type="submit" disabled={busy || !teacher}>
                Start distillation
              </button>
            </div>
          </form>
        </>
      )}
    </>
  );
}
