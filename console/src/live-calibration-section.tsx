/**
 * The teach page's live traffic: whether request content is kept (so that outcomes can label past
 * answers), and the calibration of the answers whose outcomes are known, by week, with a retrain
 * offered once it has drifted.
 */
import { useState } from 'react';
import { api, type CalibrationReport, isApiError, type RetentionPolicy, type TemplateCalibration } from './api.ts';
import { Reliability, WeeklyChart } from './charts.tsx';
import { describeQuestion, metric, type PageMessages } from './teach-model.ts';
import { Alert, formatNumber } from './ui.tsx';

function CalibrationCard({ c, onRetrain, busy }: { c: TemplateCalibration; onRetrain: () => void; busy: boolean }) {
  return (
    <section className="adapter" aria-label={`Calibration of ${describeQuestion(c.question)}`}>
      <h3>{describeQuestion(c.question)}</h3>
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

export function LiveCalibrationSection(props: {
  retention: RetentionPolicy | null;
  calibration: CalibrationReport | null;
  /** A job is queued or running (a retrain waits for it). */
  busy: boolean;
  messages: PageMessages;
  onRetention: (policy: RetentionPolicy) => void;
  onRetrain: (template: string) => void;
}) {
  const { retention, calibration } = props;
  const [days, setDays] = useState(30);

  async function saveRetention(on: boolean) {
    try {
      props.onRetention(
        await api<RetentionPolicy>('/control/v1/retention', { method: 'PUT', body: { days: on ? days : 0 } }),
      );
    } catch (err) {
      props.messages.error(isApiError(err) ? err.message : 'could not change retention');
    }
  }

  return (
    <>
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
          <CalibrationCard key={c.template} c={c} busy={props.busy} onRetrain={() => props.onRetrain(c.template)} />
        ))
      ) : (
        <p className="empty">
          No outcomes in the last {calibration?.days ?? 90} days. Once outcomes are recorded, their answers' Brier and
          ECE are charted here by week; past the drift threshold (ECE of the last {calibration?.drift.window ?? 50}{' '}
          outcomes above {calibration?.drift.ece ?? 0.1} and twice its chance floor) this page offers a retrain.
        </p>
      )}
    </>
  );
}
