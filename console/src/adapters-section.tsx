/** The teach page's adapters: each with its templates' out-of-fold reports, and a delete that stops it at once. */
import { useState } from 'react';
import { type Adapter, api, isApiError, type TemplateReport } from './api.ts';
import { Reliability } from './charts.tsx';
import { MetricTable } from './metric-table.tsx';
import { DECIDING, metric, type PageMessages, servingNote } from './teach-model.ts';
import { CopyButton, Dialog, formatDate } from './ui.tsx';

/** A reliability diagram: accuracy against confidence, before (base) and after (adapter). */
function ReliabilityDiagram({ report }: { report: TemplateReport }) {
  return (
    <Reliability
      title={`Reliability on ${report.nTest} examples, each answered by a fit that never saw it`}
      summary={`Base model ECE ${metric(report.before?.ece)}, adapter ECE ${metric(report.after?.ece)}`}
      before={report.reliability?.before ?? []}
      after={report.reliability?.after ?? []}
      labels={['base model', 'adapter']}
    />
  );
}

function MetricsTable({ report }: { report: TemplateReport }) {
  const rows: [string, TemplateReport['before']][] = [
    ['Base model', report.before],
    ['Adapter', report.after],
    ['Label frequencies (reference)', report.prior],
  ];
  return (
    <MetricTable
      caption={`Cross-fitted: each of ${report.nTest} examples answered by a fit that never saw it; the head served is fitted on all ${report.nTrain}`}
      corner="Out of fold"
      columns={['Accuracy', 'Brier', 'NLL', 'ECE (chance floor)'].map((label) => ({
        label,
        decides: DECIDING.labelled.includes(label),
      }))}
      rows={rows.map(([name, m]) => ({
        key: name,
        name,
        cells: [
          metric(m?.accuracy),
          metric(m?.brier, 4),
          metric(m?.nll),
          `${metric(m?.ece)}${m?.eceFloor !== undefined ? ` (${metric(m.eceFloor)})` : ''}`,
        ],
      }))}
    />
  );
}

/** A distilled template's held-out measures against its teacher, and against the truth where known. */
function DistillTable({ d }: { d: NonNullable<TemplateReport['distill']> }) {
  const rows: [string, NonNullable<typeof d.adapter> | null][] = [
    ['Base model', d.base],
    ['Adapter', d.adapter],
  ];
  const truth = (v: number | null | undefined) => (v === null || v === undefined ? '–' : metric(v));
  return (
    <MetricTable
      caption={`Against teacher ${d.teacher}: ${d.nTest} held-out states never fitted on${d.nTruth > 0 ? ` (${d.nTruth} with a true label)` : ''}`}
      corner="On held-out states"
      columns={[
        'Agreement with the teacher',
        'Brier to the teacher',
        'KL to the teacher',
        'ECE vs the teacher',
        'Accuracy (truth)',
      ].map((label) => ({ label, decides: DECIDING.distilled.includes(label) }))}
      rows={[
        ...rows.map(([name, m]) => ({
          key: name,
          name,
          cells: [metric(m?.agreement), metric(m?.brier, 4), metric(m?.kl), metric(m?.ece), truth(m?.accuracy)],
        })),
        { key: 'teacher', name: 'Teacher', cells: ['1.000', '0', '0', '–', truth(d.teacherAccuracy)] },
      ]}
    />
  );
}

function TemplateResult({ report, questions }: { report: TemplateReport; questions: Map<string, string> }) {
  const note = servingNote(report);
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
      {note ? (
        <p className="hint" data-testid="serving-rule">
          {note}
        </p>
      ) : null}
      {report.before ? (
        <div className="result-grid">
          {report.distill ? <DistillTable d={report.distill} /> : <MetricsTable report={report} />}
          <ReliabilityDiagram report={report} />
        </div>
      ) : null}
    </section>
  );
}

export function AdaptersSection(props: {
  adapters: Adapter[];
  questions: Map<string, string>;
  messages: PageMessages;
  onChanged: () => Promise<void>;
}) {
  const { messages } = props;
  const [deleting, setDeleting] = useState<Adapter | null>(null);

  async function removeAdapter(a: Adapter) {
    try {
      await api(`/control/v1/adapters/${encodeURIComponent(a.id)}`, { method: 'DELETE' });
      messages.notice(`Adapter ${a.id} is deleted; requests naming it now fail.`);
    } catch (err) {
      messages.error(isApiError(err) ? err.message : 'could not delete the adapter');
    } finally {
      setDeleting(null);
      await props.onChanged();
    }
  }

  return (
    <>
      <h2>Adapters</h2>
      {props.adapters.length === 0 ? <p className="empty">No adapters yet.</p> : null}
      {props.adapters.map((a) => (
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
            <TemplateResult key={r.template} report={r} questions={props.questions} />
          ))}
        </article>
      ))}
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
    </>
  );
}
