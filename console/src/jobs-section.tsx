/** The teach page's training: the button that queues a job, and the last jobs with their progress. */
import type { TrainingJob } from './api.ts';
import { isActive, jobOutlook } from './teach-model.ts';
import { formatDate, formatNumber } from './ui.tsx';

function JobRow(props: { job: TrainingJob; questions: Map<string, string>; onCancel: (job: TrainingJob) => void }) {
  const { job, onCancel } = props;
  const pct = Math.round(job.progress * 100);
  const outlook = jobOutlook(job);
  // A job that serves nothing has no adapter to show its templates' reports: they are listed here.
  const unserved = job.status === 'succeeded' && job.adapter_id === null ? (job.result?.templates ?? []) : [];
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
      {unserved.length > 0 ? (
        <ul className="reasons" aria-label={`Why job ${job.id} serves no template`}>
          {unserved.map((t) => (
            <li key={t.template}>
              <strong>{props.questions.get(t.template) ?? t.template}</strong> ({t.type}, {formatNumber(t.n)} examples):{' '}
              {t.reason}
            </li>
          ))}
        </ul>
      ) : null}
    </li>
  );
}

export function TrainingSection(props: {
  jobs: TrainingJob[];
  /** Question text by template id. */
  questions: Map<string, string>;
  canTrain: boolean;
  onTrain: () => void;
  onCancel: (job: TrainingJob) => void;
}) {
  return (
    <>
      <h2>Training</h2>
      <button type="button" onClick={props.onTrain} disabled={!props.canTrain}>
        Train an adapter
      </button>
      {props.jobs.length > 0 ? (
        <ul className="jobs" aria-label="Training jobs">
          {props.jobs.slice(0, 5).map((j) => (
            <JobRow key={j.id} job={j} questions={props.questions} onCancel={props.onCancel} />
          ))}
        </ul>
      ) : null}
    </>
  );
}
