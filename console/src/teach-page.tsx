import { type FormEvent, useCallback, useEffect, useId, useState } from 'react';
import {
  type Adapter,
  api,
  type CalibrationReport,
  type ExampleSummary,
  isApiError,
  type RetentionPolicy,
  type TemplateCalibration,
  type TemplateReport,
  type TrainingJob,
  uploadExamples,
} from './api.ts';
import { DistillSection } from './distill-section.tsx';
import {
  type Bin,
  type CsvQuestion,
  csvToJsonl,
  inCsvTerms,
  isActive,
  jobOutlook,
  metric,
  type QuestionType,
  reliabilityPoints,
} from './teach-model.ts';
import { Alert, CopyButton, Dialog, Field, formatDate, formatNumber, PageHeading } from './ui.tsx';

/** The question text of a template, for tables. */
function describe(question: Record<string, unknown>): string {
  const i = question.instructions;
  if (typeof i === 'string') return i;
  return i === null || i === undefined ? '(no instructions)' : JSON.stringify(i);
}

/** A reliability diagram in inline SVG: accuracy against confidence, before (base) and after (adapter). */
function ReliabilityDiagram({ report }: { report: TemplateReport }) {
  return (
    <Reliability
      title={`Reliability on the ${report.nTest} held-out examples`}
      summary={`Base model ECE ${metric(report.before?.ece)}, adapter ECE ${metric(report.after?.ece)}`}
      before={report.reliability?.before ?? []}
      after={report.reliability?.after ?? []}
      labels={['base model', 'adapter']}
    />
  );
}

function Reliability(props: { title: string; summary: string; before: Bin[]; after: Bin[]; labels: [string, string] }) {
  const id = useId();
  const size = 180;
  const pad = 28;
  const inner = size - 2 * pad;
  const before = reliabilityPoints(props.before);
  const after = reliabilityPoints(props.after);
  const path = (pts: { x: number; y: number }[]) =>
    pts.map((p, i) => `${i === 0 ? 'M' : 'L'}${pad + p.x * inner},${pad + (1 - p.y) * inner}`).join(' ');
  return (
    <figure className="chart reliability">
      <figcaption id={`${id}-t`}>{props.title}</figcaption>
      <svg viewBox={`0 0 ${size} ${size}`} role="img" aria-labelledby={`${id}-t ${id}-d`} className="reliability-svg">
        <title>Reliability diagram</title>
        <desc id={`${id}-d`}>
          {`Accuracy against confidence in 15 bins. ${props.summary}; the diagonal is perfect calibration.`}
        </desc>
        <rect x={pad} y={pad} width={inner} height={inner} className="frame" />
        <line x1={pad} y1={pad + inner} x2={pad + inner} y2={pad} className="diagonal" />
        <path d={path(before)} className="curve before" />
        <path d={path(after)} className="curve after" />
        {after.map((p) => (
          <circle
            key={`${p.x}-${p.y}`}
            cx={pad + p.x * inner}
            cy={pad + (1 - p.y) * inner}
            r={2.5}
            className="dot after"
          >
            <title>{`confidence ${metric(p.x, 2)}, accuracy ${metric(p.y, 2)}, ${p.n} examples`}</title>
          </circle>
        ))}
        <text x={pad} y={size - 6} className="axis">
          0
        </text>
        <text x={size - pad} y={size - 6} textAnchor="end" className="axis">
          confidence 1
        </text>
        <text x={4} y={pad + 4} className="axis">
          1
        </text>
      </svg>
      <ul className="legend">
        {props.before.length > 0 ? (
          <li>
            <span className="swatch before" aria-hidden="true" /> {props.labels[0]}
          </li>
        ) : null}
        <li>
          <span className="swatch after" aria-hidden="true" /> {props.labels[1]}
        </li>
      </ul>
    </figure>
  );
}

function MetricsTable({ report }: { report: TemplateReport }) {
  const rows: [string, TemplateReport['before']][] = [
    ['Base model', report.before],
    ['Adapter', report.after],
    ['Label frequencies (reference)', report.prior],
  ];
  return (
    <div className="table-wrap">
      <table>
        <caption>Held out: {report.nTest} examples never fitted on</caption>
        <thead>
          <tr>
            <th scope="col">On held-out examples</th>
            <th scope="col">Accuracy</th>
            <th scope="col">Brier</th>
            <th scope="col">NLL</th>
            <th scope="col">ECE (chance floor)</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([name, m]) => (
            <tr key={name}>
              <th scope="row">{name}</th>
              <td>{metric(m?.accuracy)}</td>
              <td>{metric(m?.brier, 4)}</td>
              <td>{metric(m?.nll)}</td>
              <td>
                {metric(m?.ece)}
                {m?.eceFloor !== undefined ? ` (${metric(m.eceFloor)})` : ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A distilled template's held-out measures against its teacher, and against the truth where known. */
function DistillTable({ d }: { d: NonNullable<TemplateReport['distill']> }) {
  const rows: [
    string,
    { agreement: number; brier: number; kl: number; ece: number; accuracy: number | null } | null,
  ][] = [
    ['Base model', d.base],
    ['Adapter', d.adapter],
  ];
  return (
    <div className="table-wrap">
      <table>
        <caption>
          Against teacher {d.teacher}: {d.nTest} held-out states never fitted on
          {d.nTruth > 0 ? ` (${d.nTruth} with a true label)` : ''}
        </caption>
        <thead>
          <tr>
            <th scope="col">On held-out states</th>
            <th scope="col">Agreement with the teacher</th>
            <th scope="col">Brier to the teacher</th>
            <th scope="col">KL to the teacher</th>
            <th scope="col">ECE vs the teacher</th>
            <th scope="col">Accuracy (truth)</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([name, m]) => (
            <tr key={name}>
              <th scope="row">{name}</th>
              <td>{metric(m?.agreement)}</td>
              <td>{metric(m?.brier, 4)}</td>
              <td>{metric(m?.kl)}</td>
              <td>{metric(m?.ece)}</td>
              <td>{m?.accuracy === null || m?.accuracy === undefined ? '–' : metric(m.accuracy)}</td>
            </tr>
          ))}
          <tr>
            <th scope="row">Teacher</th>
            <td>1.000</td>
            <td>0</td>
            <td>0</td>
            <td>–</td>
            <td>{d.teacherAccuracy === null ? '–' : metric(d.teacherAccuracy)}</td>
          </tr>
        </tbody>
      </table>
    </div>
  );
}

function TemplateResult({ report, questions }: { report: TemplateReport; questions: Map<string, string> }) {
  return (
    <section className="template-result" aria-label={`Template ${questions.get(report.template) ?? report.template}`}>
      <h4>
        {questions.get(report.template) ?? report.template}{' '}
        <span className={report.served ? 'badge ok' : 'badge'}>{report.served ? 'served' : 'not served'}</span>
      </h4>
      <p className="hint">
        {report.type}, {report.n} examples{report.kind ? `, ${report.chosen ?? `${report.kind} head`}` : ''}:{' '}
        {report.reason}
      </p>
      {report.before ? (
        <div className="result-grid">
          {report.distill ? <DistillTable d={report.distill} /> : <MetricsTable report={report} />}
          <ReliabilityDiagram report={report} />
        </div>
      ) : null}
    </section>
  );
}

/** Brier and ECE of live answers by week, a line chart in inline SVG. */
function WeeklyChart({ c }: { c: TemplateCalibration }) {
  const id = useId();
  const width = 360;
  const height = 160;
  const pad = { left: 36, right: 8, top: 10, bottom: 24 };
  const weeks = c.weekly;
  const max = Math.max(0.05, ...weeks.map((w) => Math.max(w.brier, w.ece)));
  const x = (i: number) =>
    pad.left + (weeks.length <= 1 ? 0.5 : i / (weeks.length - 1)) * (width - pad.left - pad.right);
  const y = (v: number) => pad.top + (1 - v / max) * (height - pad.top - pad.bottom);
  const line = (key: 'brier' | 'ece') => weeks.map((w, i) => `${i === 0 ? 'M' : 'L'}${x(i)},${y(w[key])}`).join(' ');
  return (
    <figure className="chart weekly">
      <figcaption id={`${id}-t`}>Brier and ECE of live answers by week</figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby={`${id}-t ${id}-d`} className="weekly-svg">
        <title>Brier and ECE by week</title>
        <desc id={`${id}-d`}>
          {weeks
            .map((w) => `week of ${w.week}: ${w.n} outcomes, Brier ${metric(w.brier)}, ECE ${metric(w.ece)}`)
            .join('; ')}
        </desc>
        {[0, max / 2, max].map((v) => (
          <g key={v}>
            <line x1={pad.left} x2={width - pad.right} y1={y(v)} y2={y(v)} className="grid" />
            <text x={pad.left - 4} y={y(v) + 4} textAnchor="end" className="axis">
              {v.toFixed(2)}
            </text>
          </g>
        ))}
        <path d={line('brier')} className="curve brier" />
        <path d={line('ece')} className="curve ece" />
        {weeks.map((w, i) => (
          <g key={w.week}>
            <circle cx={x(i)} cy={y(w.brier)} r={3} className="dot brier" />
            <circle cx={x(i)} cy={y(w.ece)} r={3} className="dot ece" />
            <text x={x(i)} y={height - 6} textAnchor="middle" className="axis">
              {w.week.slice(5)}
            </text>
          </g>
        ))}
      </svg>
      <ul className="legend">
        <li>
          <span className="swatch brier" aria-hidden="true" /> Brier
        </li>
        <li>
          <span className="swatch ece" aria-hidden="true" /> ECE
        </li>
      </ul>
    </figure>
  );
}

function CalibrationCard({ c, onRetrain, busy }: { c: TemplateCalibration; onRetrain: () => void; busy: boolean }) {
  return (
    <section className="adapter" aria-label={`Calibration of ${describe(c.question)}`}>
      <h3>{describe(c.question)}</h3>
      {c.drifted ? (
        <Alert kind="error">
          Calibration has drifted: {c.reason.replace(/^drifted: /, '')}.{' '}
          <button type="button" className="small" onClick={onRetrain} disabled={busy}>
            Retrain on these outcomes
          </button>
        </Alert>
      ) : (
        <p className="hint">{c.reason}.</p>
      )}
      <p className="hint">
        {formatNumber(c.overall.n)} outcomes: accuracy {metric(c.overall.accuracy)}, Brier {metric(c.overall.brier, 4)},
        ECE {metric(c.overall.ece)} (chance floor {metric(c.overall.ece_floor)}); answered by {c.served_by.join(', ')}.
      </p>
      <div className="result-grid">
        <WeeklyChart c={c} />
        <Reliability
          title="Reliability of live answers"
          summary={`ECE ${metric(c.overall.ece)}`}
          before={[]}
          after={c.reliability}
          labels={['', 'served answers']}
        />
      </div>
    </section>
  );
}

function JobRow({ job, onCancel }: { job: TrainingJob; onCancel: (job: TrainingJob) => void }) {
  const pct = Math.round(job.progress * 100);
  const outlook = jobOutlook(job);
  return (
    <li className="job">
      <div className="job-head">
        <strong>{job.status}</strong> <span className="muted">{formatDate(job.created_at)}</span>
        {job.kind === 'distill' && job.distill ? (
          <span className="muted">
            {' '}
            · distillation from {job.distill.teacher}: {formatNumber(job.teacher_calls)} of{' '}
            {formatNumber(job.distill.budget)} teacher calls
          </span>
        ) : null}
        {outlook ? <span className="muted"> · {outlook}</span> : null}
        {isActive(job.status) ? (
          <button type="button" className="small" onClick={() => onCancel(job)}>
            Cancel job
          </button>
        ) : null}
      </div>
      <div
        className="progress"
        role="progressbar"
        aria-label={`Training job ${job.id}`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct}
        aria-valuetext={`${pct}%: ${job.message}`}
      >
        <div className={`progress-bar ${job.status}`} style={{ width: `${pct}%` }} />
      </div>
      <p className="hint">
        {pct}% · {job.stage}: {job.message}
      </p>
    </li>
  );
}

export function TeachPage() {
  const [examples, setExamples] = useState<ExampleSummary | null>(null);
  const [jobs, setJobs] = useState<TrainingJob[]>([]);
  const [adapters, setAdapters] = useState<Adapter[]>([]);
  const [retention, setRetention] = useState<RetentionPolicy | null>(null);
  const [calibration, setCalibration] = useState<CalibrationReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [issues, setIssues] = useState<string[]>([]);
  const [notice, setNotice] = useState<string | null>(null);
  const [file, setFile] = useState<File | null>(null);
  const [question, setQuestion] = useState<CsvQuestion>({ type: 'choice', instructions: '', options: '' });
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState<Adapter | null>(null);
  const [days, setDays] = useState(30);
  const isCsv = file?.name.toLowerCase().endsWith('.csv') ?? false;

  const load = useCallback(async () => {
    try {
      const [e, j, a, r, c] = await Promise.all([
        api<ExampleSummary>('/control/v1/examples'),
        api<{ data: TrainingJob[] }>('/control/v1/training-jobs'),
        api<{ data: Adapter[] }>('/control/v1/adapters'),
        api<RetentionPolicy>('/control/v1/retention'),
        api<CalibrationReport>('/control/v1/calibration'),
      ]);
      setExamples(e);
      setJobs(j.data);
      setAdapters(a.data);
      setRetention(r);
      setCalibration(c);
    } catch (err) {
      setError(isApiError(err) ? err.message : 'could not load this page');
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  // While a job is queued or running, its progress is polled every second.
  const active = jobs.some((j) => isActive(j.status));
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => void load(), 1000);
    return () => clearInterval(timer);
  }, [active, load]);

  async function upload(e: FormEvent) {
    e.preventDefault();
    setError(null);
    setIssues([]);
    setNotice(null);
    if (!file) {
      setError('Choose a JSON Lines (.jsonl) or CSV (.csv) file first.');
      return;
    }
    setBusy(true);
    try {
      const text = await file.text();
      const body = isCsv ? csvToJsonl(text, question).jsonl : text;
      const result = await uploadExamples(body);
      setNotice(
        `Stored ${formatNumber(result.added)} labelled questions from ${formatNumber(result.rows)} rows; the account has ${formatNumber(result.total)}.`,
      );
      await load();
    } catch (err) {
      const message = err instanceof Error ? err.message : 'the upload failed';
      setError(isCsv ? inCsvTerms(message) : message);
      const list = isApiError(err) ? err.issues.map((i) => i.msg) : [];
      setIssues(isCsv ? list.map(inCsvTerms) : list);
    } finally {
      setBusy(false);
    }
  }

  async function cancel(job: TrainingJob) {
    setError(null);
    try {
      await api(`/control/v1/training-jobs/${job.id}/cancel`, { method: 'POST' });
      setNotice(`Training job ${job.id} is cancelled.`);
    } catch (err) {
      setError(isApiError(err) ? err.message : 'could not cancel the job');
    }
    await load();
  }

  async function train(templates?: string[]) {
    setError(null);
    setNotice(null);
    try {
      await api('/control/v1/training-jobs', { body: templates ? { templates } : {} });
      await load();
    } catch (err) {
      setError(isApiError(err) ? err.message : 'could not queue the job');
    }
  }

  async function removeTemplate(id: string) {
    try {
      await api(`/control/v1/examples/${encodeURIComponent(id)}`, { method: 'DELETE' });
      await load();
    } catch (err) {
      setError(isApiError(err) ? err.message : 'could not delete the examples');
    }
  }

  async function removeAdapter(a: Adapter) {
    try {
      await api(`/control/v1/adapters/${encodeURIComponent(a.id)}`, { method: 'DELETE' });
      setNotice(`Adapter ${a.id} is deleted; requests naming it now fail.`);
    } catch (err) {
      setError(isApiError(err) ? err.message : 'could not delete the adapter');
    } finally {
      setDeleting(null);
      await load();
    }
  }

  async function saveRetention(on: boolean) {
    try {
      setRetention(
        await api<RetentionPolicy>('/control/v1/retention', { method: 'PUT', body: { days: on ? days : 0 } }),
      );
    } catch (err) {
      setError(isApiError(err) ? err.message : 'could not change retention');
    }
  }

  const questions = new Map((examples?.templates ?? []).map((t) => [t.id, describe(t.question)]));

  return (
    <section>
      <PageHeading title="Teach your task" />
      <p className="lead">
        Upload questions you ask with their true answers; Brier fits an adapter on them, measures it on examples it
        never saw, and serves it as a model id of your account only if it beats the base model there.
      </p>
      {error ? (
        <Alert>
          {error}
          {issues.length > 0 ? (
            <ul className="issues">
              {issues.slice(0, 20).map((m) => (
                <li key={m}>{m}</li>
              ))}
            </ul>
          ) : null}
        </Alert>
      ) : null}
      {notice ? <Alert kind="success">{notice}</Alert> : null}

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
        <div className="table-wrap">
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
                  <td>{describe(t.question)}</td>
                  <td>{t.type}</td>
                  <td>
                    {formatNumber(t.examples)}
                    {t.outcomes > 0 ? ` (${formatNumber(t.outcomes)} outcomes)` : ''}
                    {t.teacher_labels > 0 ? `, ${formatNumber(t.teacher_labels)} labelled by a teacher` : ''}
                  </td>
                  <td>
                    {Object.entries(t.labels)
                      .map(([l, n]) => `${l}: ${n}`)
                      .join(', ')}
                  </td>
                  <td className="actions">
                    <button
                      type="button"
                      className="danger small"
                      aria-label={`Delete the examples of ${describe(t.question)}`}
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

      <DistillSection onQueued={load} />

      <h2>Training</h2>
      <button type="button" onClick={() => void train()} disabled={!examples?.templates.length}>
        Train an adapter
      </button>
      {jobs.length > 0 ? (
        <ul className="jobs" aria-label="Training jobs">
          {jobs.slice(0, 5).map((j) => (
            <JobRow key={j.id} job={j} onCancel={(x) => void cancel(x)} />
          ))}
        </ul>
      ) : null}

      <h2>Adapters</h2>
      {adapters.length === 0 ? <p className="empty">No adapters yet.</p> : null}
      {adapters.map((a) => (
        <article key={a.id} className="adapter" aria-label={`Adapter ${a.id}`}>
          <div className="toolbar">
            <code>{a.id}</code>
            <CopyButton text={a.id} label="Copy model id" />
            <button type="button" className="danger small" onClick={() => setDeleting(a)}>
              Delete adapter
            </button>
          </div>
          <p className="hint">
            On {a.base_model}
            {a.retrain ? ` (not served: ${a.retrain})` : ''} · {formatDate(a.created_at)}. Name it as the model in POST
            /v1/systemone; questions of other templates fall back to the base model, and each answer's x_answered_by
            says which.
          </p>
          {a.templates.map((r) => (
            <TemplateResult key={r.template} report={r} questions={questions} />
          ))}
        </article>
      ))}

      <h2>Outcomes from live traffic</h2>
      <p>
        To label past decisions with what turned out true (POST /control/v1/outcomes with the request id), their content
        must be kept. It is off by default.{' '}
        {retention?.account_days
          ? `Requests of every key are kept ${retention.account_days} days (${formatNumber(retention.retained)} now).`
          : retention && retention.keys.length > 0
            ? `Requests of ${retention.keys.length} key${retention.keys.length === 1 ? '' : 's'} are kept (${formatNumber(retention.retained)} now); the others keep nothing.`
            : 'Nothing of your requests is kept now.'}
      </p>
      <div className="inline-form">
        <label htmlFor="retention-days">Keep for (days)</label>
        <input
          id="retention-days"
          type="number"
          min={1}
          max={retention?.max_days ?? 90}
          value={days}
          onChange={(e) => setDays(Number(e.target.value))}
        />
        <button type="button" className="secondary" onClick={() => void saveRetention(true)}>
          Keep request content
        </button>
        {retention?.account_days ? (
          <button type="button" className="danger" onClick={() => void saveRetention(false)}>
            Turn off and delete
          </button>
        ) : null}
      </div>

      <h2>Calibration of live answers</h2>
      {calibration && calibration.templates.length > 0 ? (
        calibration.templates.map((c) => (
          <CalibrationCard key={c.template} c={c} busy={active} onRetrain={() => void train([c.template])} />
        ))
      ) : (
        <p className="empty">
          No outcomes in the last {calibration?.days ?? 90} days. Once outcomes are recorded, their answers' Brier and
          ECE are charted here by week; past the drift threshold (ECE of the last {calibration?.drift.window ?? 50}{' '}
          outcomes above {calibration?.drift.ece ?? 0.1} and twice its chance floor) this page offers a retrain.
        </p>
      )}

      <Dialog open={deleting !== null} title="Delete this adapter?" onClose={() => setDeleting(null)}>
        <p>Requests that name {deleting?.id} will fail at once. Its examples stay.</p>
        <div className="dialog-actions">
          <button type="button" className="secondary" onClick={() => setDeleting(null)}>
            Cancel
          </button>
          <button type="button" className="danger" onClick={() => deleting && void removeAdapter(deleting)}>
            Delete
          </button>
        </div>
      </Dialog>
    </section>
  );
}
