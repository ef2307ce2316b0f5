import { type FormEvent, useEffect, useId, useMemo, useState } from 'react';
import { type ApiErrorShape, api, isApiError, readApiError, type SystemOneResponse, type WireAnswer } from './api.ts';
import {
  answeredBy,
  type DraftErrors,
  describeAnsweredBy,
  describeTie,
  EXAMPLE,
  fromBody,
  fromHash,
  newQuestion,
  type OptionBar,
  type PlaygroundState,
  type Preference,
  preference,
  type QuestionDraft,
  type QuestionType,
  shareHash,
  snippets,
  toBody,
  validate,
} from './playground-model.ts';
import { Alert, CopyButton, Field, formatNumber, PageHeading } from './ui.tsx';

function QuestionEditor(props: {
  q: QuestionDraft;
  index: number;
  errors: DraftErrors;
  onChange: (q: QuestionDraft) => void;
  onRemove: () => void;
}) {
  const { q, index, errors, onChange } = props;
  const legend = `Question ${index + 1}`;
  return (
    <fieldset className="question">
      <legend>{legend}</legend>
      <div className="row">
        <Field label="Id" error={errors[`q.${index}.id`]}>
          {(a) => <input {...a} value={q.id} onChange={(e) => onChange({ ...q, id: e.target.value })} />}
        </Field>
        <Field label="Type">
          {(a) => (
            <select {...a} value={q.type} onChange={(e) => onChange({ ...q, type: e.target.value as QuestionType })}>
              <option value="noul">noul (yes / no)</option>
              <option value="choice">choice (one of labels)</option>
              <option value="score">score (ordered levels)</option>
            </select>
          )}
        </Field>
      </div>
      <Field label="Instructions" hint="What to decide about the state (optional).">
        {(a) => (
          <input {...a} value={q.instructions} onChange={(e) => onChange({ ...q, instructions: e.target.value })} />
        )}
      </Field>
      {q.type === 'noul' ? (
        <div className="row">
          <Field label="Yes means (optional)">
            {(a) => <input {...a} value={q.trueText} onChange={(e) => onChange({ ...q, trueText: e.target.value })} />}
          </Field>
          <Field label="No means (optional)">
            {(a) => (
              <input {...a} value={q.falseText} onChange={(e) => onChange({ ...q, falseText: e.target.value })} />
            )}
          </Field>
        </div>
      ) : null}
      {q.type === 'choice' ? (
        <fieldset className="list">
          <legend className="sr-only">{`${legend} options`}</legend>
          {q.options.map((o, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place and have no identity
            <div className="row option" key={i}>
              <Field label={`Option ${i + 1} label`}>
                {(a) => (
                  <input
                    {...a}
                    value={o.label}
                    onChange={(e) =>
                      onChange({
                        ...q,
                        options: q.options.map((x, j) => (j === i ? { ...x, label: e.target.value } : x)),
                      })
                    }
                  />
                )}
              </Field>
              <Field label={`Option ${i + 1} description`}>
                {(a) => (
                  <input
                    {...a}
                    value={o.description}
                    onChange={(e) =>
                      onChange({
                        ...q,
                        options: q.options.map((x, j) => (j === i ? { ...x, description: e.target.value } : x)),
                      })
                    }
                  />
                )}
              </Field>
              <button
                type="button"
                className="link"
                aria-label={`Remove option ${i + 1}`}
                onClick={() => onChange({ ...q, options: q.options.filter((_, j) => j !== i) })}
              >
                Remove
              </button>
            </div>
          ))}
          {errors[`q.${index}.options`] ? (
            <p className="field-error" role="alert">
              {errors[`q.${index}.options`]}
            </p>
          ) : null}
          <button
            type="button"
            className="secondary small"
            onClick={() => onChange({ ...q, options: [...q.options, { label: '', description: '' }] })}
          >
            Add option
          </button>
        </fieldset>
      ) : null}
      {q.type === 'score' ? (
        <fieldset className="list">
          <legend className="sr-only">{`${legend} levels, lowest first`}</legend>
          {q.levels.map((l, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place and have no identity
            <div className="row option" key={i}>
              <Field label={`Level ${i} ${i === 0 ? '(lowest)' : ''}`}>
                {(a) => (
                  <input
                    {...a}
                    value={l}
                    onChange={(e) => onChange({ ...q, levels: q.levels.map((x, j) => (j === i ? e.target.value : x)) })}
                  />
                )}
              </Field>
              <button
                type="button"
                className="link"
                aria-label={`Remove level ${i}`}
                onClick={() => onChange({ ...q, levels: q.levels.filter((_, j) => j !== i) })}
              >
                Remove
              </button>
            </div>
          ))}
          {errors[`q.${index}.levels`] ? (
            <p className="field-error" role="alert">
              {errors[`q.${index}.levels`]}
            </p>
          ) : null}
          <button
            type="button"
            className="secondary small"
            onClick={() => onChange({ ...q, levels: [...q.levels, ''] })}
          >
            Add level
          </button>
        </fieldset>
      ) : null}
      <button type="button" className="link danger-text" onClick={props.onRemove}>
        Remove question {q.id ? `“${q.id}”` : index + 1}
      </button>
    </fieldset>
  );
}

function Bars({ rows, pref }: { rows: OptionBar[]; pref: Preference }) {
  const chosen = pref.kind === 'chosen' ? pref.label : undefined;
  return (
    <ul className="bars">
      {rows.map((r) => (
        <li key={r.label} className={r.label === chosen ? 'chosen' : undefined}>
          <span className="bar-label">
            <span className="bar-name" title={r.label}>
              {r.label}
            </span>
            {r.label === chosen ? <span className="badge">chosen</span> : null}
          </span>
          <span className="bar-track" aria-hidden="true">
            <span className="bar-fill" style={{ width: `${Math.round(r.p * 100)}%` }} />
          </span>
          <span className="bar-value">{r.p.toFixed(2)}</span>
        </li>
      ))}
    </ul>
  );
}

/** Notes that the wire's `choice` field still names an option (choice questions only). */
function StillNames({ field }: { field?: string | undefined }) {
  if (!field) return null;
  return (
    <>
      {' '}
      (the response's <code>choice</code> still names <code>{field}</code>)
    </>
  );
}

/**
 * Says that an abstained answer carries no information, and that a tied one prefers nothing, instead
 * of badging one of the options.
 */
function NoPreference({ pref, field }: { pref: Preference; field?: string | undefined }) {
  if (pref.kind === 'abstained') {
    return (
      <p className="no-preference" data-testid="no-information">
        <span className="badge neutral">no information</span> the model abstained on this question: these numbers are
        the uninformative answer, not a judgement
        <StillNames field={field} />.
      </p>
    );
  }
  if (pref.kind !== 'tied') return null;
  return (
    <p className="no-preference" data-testid="no-preference">
      <span className="badge neutral">no preference</span> {describeTie(pref.labels, pref.p)}
      <StillNames field={field} />.
    </p>
  );
}

/**
 * A refused request: the server's message, and for an invalid body (422) each problem at its field,
 * as the detail list names them.
 */
function RunError({ error }: { error: ApiErrorShape }) {
  if (error.issues.length === 0) return <Alert>{error.message}</Alert>;
  return (
    <Alert>
      The request is invalid ({error.issues.length === 1 ? 'one problem' : `${error.issues.length} problems`}):
      <ul className="issues" data-testid="run-issues">
        {error.issues.slice(0, 20).map((issue, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list, shown once
          <li key={i}>
            <code>{issue.field}</code>: {issue.msg}
          </li>
        ))}
      </ul>
    </Alert>
  );
}

function AnswerCard({ id, answer, model }: { id: string; answer: WireAnswer; model: string }) {
  const by = answeredBy(answer.x_answered_by, model);
  let body: React.ReactNode;
  if (answer.type === 'noul') {
    const rows = [
      { label: 'yes', p: answer.noul },
      { label: 'no', p: Math.round((1 - answer.noul) * 100) / 100 },
    ];
    const pref = preference(rows, answer.x_abstained);
    body = (
      <>
        <p className="answer-summary">
          P(yes) = <strong>{answer.noul.toFixed(2)}</strong>
        </p>
        <NoPreference pref={pref} />
        <Bars rows={rows} pref={pref} />
      </>
    );
  } else if (answer.type === 'choice') {
    const rows = Object.entries(answer.probabilities).map(([label, p]) => ({ label, p }));
    const pref = preference(rows, answer.x_abstained);
    body = (
      <>
        <p className="answer-summary">
          {pref.kind === 'chosen' ? (
            <>
              Choice <strong>{answer.choice}</strong>
            </>
          ) : (
            'No clear choice'
          )}{' '}
          · confidence {answer.confidence.toFixed(2)}
        </p>
        <NoPreference pref={pref} field={answer.choice} />
        <Bars rows={rows} pref={pref} />
      </>
    );
  } else {
    const legend = (k: string) => {
      const v = answer.legend[k];
      return `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`;
    };
    const rows = Object.entries(answer.probabilities).map(([k, p]) => ({ label: legend(k), p }));
    const pref = preference(rows, answer.x_abstained);
    body = (
      <>
        <p className="answer-summary">
          Expected score <strong>{answer.score.toFixed(2)}</strong> · confidence {answer.confidence.toFixed(2)}
        </p>
        <NoPreference pref={pref} />
        <Bars rows={rows} pref={pref} />
      </>
    );
  }
  return (
    <article className="answer" aria-label={`Answer to ${id}`}>
      <h3>
        {id} <span className="muted">({answer.type})</span>
      </h3>
      {by ? (
        <p className="answered-by" data-testid="answered-by">
          <span className={`badge ${by.kind === 'adapter' ? 'ok' : 'neutral'}`}>{by.kind}</span>{' '}
          {describeAnsweredBy(by)}
        </p>
      ) : null}
      {body}
    </article>
  );
}

type Tab = 'curl' | 'typescript' | 'python';

export function PlaygroundPage() {
  const [draft, setDraft] = useState<PlaygroundState>(() => fromHash(window.location.hash) ?? EXAMPLE);
  const [mode, setMode] = useState<'form' | 'json'>('form');
  const [jsonText, setJsonText] = useState('');
  const [jsonError, setJsonError] = useState<string | undefined>();
  const [errors, setErrors] = useState<DraftErrors>({});
  const [result, setResult] = useState<{ response: SystemOneResponse; ms: number; serverMs: number | null } | null>(
    null,
  );
  const [runError, setRunError] = useState<ApiErrorShape | null>(null);
  const [busy, setBusy] = useState(false);
  const [tab, setTab] = useState<Tab>('curl');
  const [shared, setShared] = useState<string | null>(null);
  const stateTypeId = useId();
  const modelId = useId();
  /** The account's adapters, offered beside the base model (none when the list cannot be read). */
  const [adapters, setAdapters] = useState<string[]>([]);
  useEffect(() => {
    api<{ data: { id: string }[] }>('/control/v1/adapters').then(
      (r) => setAdapters(r.data.map((a) => a.id)),
      () => setAdapters([]),
    );
  }, []);

  useEffect(() => {
    const onHash = () => {
      const s = fromHash(window.location.hash);
      if (s) setDraft(s);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  const body = useMemo(() => toBody(draft), [draft]);
  const code = useMemo(() => snippets(window.location.origin, body), [body]);

  function switchMode(next: 'form' | 'json') {
    if (next === mode) return;
    if (next === 'json') {
      setJsonText(JSON.stringify(body, null, 2));
      setJsonError(undefined);
      setMode('json');
      return;
    }
    if (applyJson()) setMode('form');
  }

  function applyJson(): PlaygroundState | null {
    try {
      const parsed = fromBody(JSON.parse(jsonText));
      setDraft(parsed);
      setJsonError(undefined);
      return parsed;
    } catch (e) {
      setJsonError(`Cannot use this JSON: ${(e as Error).message}`);
      return null;
    }
  }

  async function run(e: FormEvent) {
    e.preventDefault();
    const current = mode === 'json' ? applyJson() : draft;
    if (!current) return;
    const found = validate(current);
    setErrors(found);
    if (Object.keys(found).length > 0) {
      if (mode === 'json') setJsonError(Object.values(found)[0]);
      return;
    }
    setBusy(true);
    setRunError(null);
    const started = performance.now();
    try {
      const res = await fetch('/control/v1/playground/systemone', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(toBody(current)),
      });
      const ms = performance.now() - started;
      const timing = /dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '');
      const json: unknown = await res.json().catch(() => null);
      if (!res.ok) {
        setRunError(readApiError(res.status, json, res.headers.get('retry-after')));
        setResult(null);
      } else {
        setResult({ response: json as SystemOneResponse, ms, serverMs: timing?.[1] ? Number(timing[1]) : null });
      }
    } catch (err) {
      setRunError(isApiError(err) ? err : { status: 0, message: 'the server could not be reached', issues: [] });
    } finally {
      setBusy(false);
    }
  }

  async function share() {
    const hash = shareHash(draft);
    window.history.replaceState(null, '', `${window.location.pathname}${hash}`);
    const url = window.location.href;
    try {
      await navigator.clipboard.writeText(url);
      setShared('Link copied. Anyone signed in to a Brier console on this server sees this playground.');
    } catch {
      setShared('The address bar now holds the shareable link.');
    }
  }

  const update = (i: number, q: QuestionDraft) =>
    setDraft((d) => ({ ...d, questions: d.questions.map((x, j) => (j === i ? q : x)) }));

  return (
    <section>
      <PageHeading title="Playground">
        <p className="lead">
          Ask typed questions about a state and see the probabilities. Runs use your session (no key needed) and count
          in your usage as “playground”.
        </p>
      </PageHeading>
      <form onSubmit={run} noValidate className="playground">
        <fieldset className="segmented">
          <legend className="sr-only">Edit as</legend>
          <button type="button" aria-pressed={mode === 'form'} onClick={() => switchMode('form')}>
            Form
          </button>
          <button type="button" aria-pressed={mode === 'json'} onClick={() => switchMode('json')}>
            JSON
          </button>
        </fieldset>
        {mode === 'json' ? (
          <Field
            label="Request body (JSON)"
            error={jsonError}
            hint="Paste a /v1/systemone body: {model?, state, questions}."
          >
            {(a) => (
              <textarea
                {...a}
                className="code"
                rows={18}
                spellCheck={false}
                value={jsonText}
                onChange={(e) => setJsonText(e.target.value)}
              />
            )}
          </Field>
        ) : (
          <>
            <div className="field compact">
              <label htmlFor={modelId}>Model</label>
              <select id={modelId} value={draft.model} onChange={(e) => setDraft({ ...draft, model: e.target.value })}>
                <option value="">base model (brier-latest)</option>
                {[...new Set([...adapters, ...(draft.model ? [draft.model] : [])])].map((id) => (
                  <option key={id} value={id}>
                    {id}
                  </option>
                ))}
              </select>
            </div>
            <div className="field compact">
              <label htmlFor={stateTypeId}>State is</label>
              <select
                id={stateTypeId}
                value={draft.stateIsJson ? 'json' : 'text'}
                onChange={(e) => setDraft({ ...draft, stateIsJson: e.target.value === 'json' })}
              >
                <option value="text">Text</option>
                <option value="json">JSON</option>
              </select>
            </div>
            <Field label="State" error={errors.state}>
              {(a) => (
                <textarea
                  {...a}
                  rows={draft.stateIsJson ? 8 : 4}
                  className={draft.stateIsJson ? 'code' : undefined}
                  value={draft.state}
                  onChange={(e) => setDraft({ ...draft, state: e.target.value })}
                />
              )}
            </Field>
            {draft.questions.map((q, i) => (
              <QuestionEditor
                // biome-ignore lint/suspicious/noArrayIndexKey: questions are edited in place
                key={i}
                q={q}
                index={i}
                errors={errors}
                onChange={(next) => update(i, next)}
                onRemove={() => setDraft({ ...draft, questions: draft.questions.filter((_, j) => j !== i) })}
              />
            ))}
            {errors.questions ? (
              <p className="field-error" role="alert">
                {errors.questions}
              </p>
            ) : null}
            <div className="button-row">
              {(['noul', 'choice', 'score'] as const).map((t) => (
                <button
                  key={t}
                  type="button"
                  className="secondary small"
                  onClick={() =>
                    setDraft({
                      ...draft,
                      questions: [...draft.questions, newQuestion(t, `q${draft.questions.length + 1}`)],
                    })
                  }
                >
                  Add {t} question
                </button>
              ))}
            </div>
          </>
        )}
        <div className="button-row">
          <button type="submit" disabled={busy}>
            {busy ? 'Running…' : 'Run'}
          </button>
          <button type="button" className="secondary" onClick={share}>
            Share link
          </button>
          <button
            type="button"
            className="link"
            onClick={() => {
              setDraft(EXAMPLE);
              setErrors({});
              setJsonText(JSON.stringify(toBody(EXAMPLE), null, 2));
            }}
          >
            Reset to the example
          </button>
        </div>
        {shared ? <Alert kind="info">{shared}</Alert> : null}
      </form>

      <div aria-live="polite">
        {runError ? <RunError error={runError} /> : null}
        {result ? (
          <section className="results" aria-label="Answers">
            <h2>Answers</h2>
            <p className="meta" data-testid="run-meta">
              Model <code>{result.response.model}</code> · {formatNumber(result.response.usage.input_tokens)} input
              tokens · {formatNumber(result.response.usage.output_tokens)} output tokens · {Math.round(result.ms)} ms
              {result.serverMs !== null ? ` (${result.serverMs.toFixed(0)} ms in the model)` : ''}
            </p>
            <div className="answers">
              {Object.entries(result.response.answers).map(([id, a]) => (
                <AnswerCard key={id} id={id} answer={a} model={result.response.model} />
              ))}
            </div>
          </section>
        ) : null}
      </div>

      <section className="snippets" aria-label="Code">
        <h2>Call it from code</h2>
        <p className="hint">
          Set <code>BRIER_KEY</code> to one of your API keys.
        </p>
        <div className="segmented" role="tablist" aria-label="Language">
          {(['curl', 'typescript', 'python'] as const).map((t) => (
            <button
              key={t}
              type="button"
              role="tab"
              id={`tab-${t}`}
              aria-selected={tab === t}
              aria-controls="snippet-panel"
              onClick={() => setTab(t)}
            >
              {t === 'curl' ? 'curl' : t === 'typescript' ? 'TypeScript' : 'Python'}
            </button>
          ))}
        </div>
        <div id="snippet-panel" role="tabpanel" aria-labelledby={`tab-${tab}`}>
          <pre className="code-block" data-testid={`snippet-${tab}`}>
            <code>{code[tab]}</code>
          </pre>
          <CopyButton text={code[tab]} label={`Copy ${tab === 'typescript' ? 'TypeScript' : tab}`} />
        </div>
      </section>
    </section>
  );
}
