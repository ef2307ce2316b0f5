import { useEffect, useMemo, useState } from 'react';
import { api, type Comparison, type ConsoleModel, isApiError } from './api.ts';
import { calibrationStatus, type ModelCalibration, worseThanUniform } from './calibration-model.ts';
import { parseBlocks, parseInline } from './markdown.ts';
import { InlineView, MarkdownView } from './markdown-view.tsx';
import { Alert, formatNumber, PageHeading } from './ui.tsx';

const fmt = (v: number | null | undefined) => (v === null || v === undefined ? '–' : v.toFixed(3));

function EvalRows({ type, family, c }: { type: string; family: string; c: Comparison | null }) {
  if (!c) return null;
  return (
    <tr>
      <th scope="row">
        {type} <span className="muted">({family})</span>
      </th>
      <td>{formatNumber(c.model.n)}</td>
      <td>{fmt(c.model.brier)}</td>
      <td>{fmt(c.prior?.brier)}</td>
      <td>{fmt(c.uniform?.brier)}</td>
      <td>{fmt(c.model.accuracy)}</td>
      <td>{fmt(c.model.ece)}</td>
    </tr>
  );
}

function CalibrationSection({ calibration }: { calibration: ModelCalibration }) {
  const status = calibrationStatus(calibration);
  return (
    <>
      <h2>Calibration</h2>
      <p data-testid="calibration-status">{status}</p>
      {calibration.report.length > 0 ? (
        <div className="table-wrap">
          <table data-testid="calibration-report">
            <caption>
              Brier score (lower is better) of the model's raw answers (before), calibrated (after), and with each
              source set answered by a calibration fitted without it (held out), against the uniform answer; accuracy
              and ECE (with the ECE a perfectly calibrated model would show by chance at these rows).
            </caption>
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Set</th>
                <th scope="col">Rows</th>
                <th scope="col">Uniform</th>
                <th scope="col">Brier before</th>
                <th scope="col">After</th>
                <th scope="col">Held out</th>
                <th scope="col">Accuracy</th>
                <th scope="col">ECE before</th>
                <th scope="col">After (floor)</th>
              </tr>
            </thead>
            <tbody>
              {calibration.report.map((r) => (
                <tr key={`${r.type}/${r.set ?? ''}`} className={worseThanUniform(r) ? 'worse' : undefined}>
                  <th scope="row">{r.type}</th>
                  <td>{r.set ?? 'all'}</td>
                  <td>{formatNumber(r.n)}</td>
                  <td>{fmt(r.uniform_brier)}</td>
                  <td>{fmt(r.before.brier)}</td>
                  <td>{fmt(r.after.brier)}</td>
                  <td>{fmt(r.held_out?.brier)}</td>
                  <td>{fmt(r.before.accuracy)}</td>
                  <td>{fmt(r.before.ece)}</td>
                  <td>
                    {fmt(r.after.ece)} <span className="muted">({fmt(r.after.ece_floor)})</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

export function ModelPage() {
  const [model, setModel] = useState<ConsoleModel | null>(null);
  const [error, setError] = useState<string | null>(null);
  const markdown = model?.card?.markdown;
  // The card without its own top heading: the page shows the title above the evaluation table.
  const cardBlocks = useMemo(() => {
    const blocks = markdown ? parseBlocks(markdown) : [];
    return blocks[0]?.kind === 'heading' && blocks[0].level === 1 ? blocks.slice(1) : blocks;
  }, [markdown]);
  useEffect(() => {
    api<ConsoleModel>('/control/v1/model').then(setModel, (err: unknown) =>
      setError(isApiError(err) ? err.message : 'could not load the model'),
    );
  }, []);
  return (
    <section>
      <PageHeading title="Model" />
      {error ? <Alert>{error}</Alert> : null}
      {!model && !error ? <p aria-busy="true">Loading…</p> : null}
      {model ? (
        <>
          <dl className="stats">
            <div>
              <dt>Model id</dt>
              <dd>
                <code data-testid="model-id">{model.id}</code>
              </dd>
            </div>
            <div>
              <dt>Alias</dt>
              <dd>
                <code>{model.name}</code>
              </dd>
            </div>
            <div>
              <dt>Context limit</dt>
              <dd>{formatNumber(model.context_limit)} tokens</dd>
            </div>
            <div>
              <dt>Input limit</dt>
              <dd>{formatNumber(model.input_limit)} tokens</dd>
            </div>
          </dl>
          <p>{model.description}</p>
          <p className="hint">
            Context limit: the state plus all questions. Input limit: the state plus the longest question. Requests over
            either are refused with a 400, never truncated. Released {model.release_date}.
          </p>
          {model.calibration ? <CalibrationSection calibration={model.calibration} /> : null}
          {model.card ? (
            <>
              <h2 data-testid="card-title">
                <InlineView nodes={parseInline(model.card.title)} />
              </h2>
              {Object.keys(model.card.evaluation).length > 0 ? (
                <div className="table-wrap">
                  <table>
                    <caption>
                      Brier score (lower is better) against the majority prior and the uniform answer; “seen”: rows of
                      training tasks, each scored by a head that did not train on it; “unseen”: tasks never trained on.
                    </caption>
                    <thead>
                      <tr>
                        <th scope="col">Type</th>
                        <th scope="col">Rows</th>
                        <th scope="col">Brier</th>
                        <th scope="col">Prior</th>
                        <th scope="col">Uniform</th>
                        <th scope="col">Accuracy</th>
                        <th scope="col">ECE</th>
                      </tr>
                    </thead>
                    <tbody>
                      {Object.entries(model.card.evaluation).flatMap(([type, e]) => [
                        <EvalRows key={`${type}-seen`} type={type} family="seen" c={e.seen} />,
                        <EvalRows key={`${type}-unseen`} type={type} family="unseen" c={e.unseen} />,
                      ])}
                    </tbody>
                  </table>
                </div>
              ) : null}
              <details>
                <summary>The full model card</summary>
                <div className="card-text" data-testid="model-card">
                  <MarkdownView blocks={cardBlocks} headingOffset={1} />
                </div>
              </details>
            </>
          ) : (
            <p className="empty">This server's model ships no model card.</p>
          )}
        </>
      ) : null}
    </section>
  );
}
