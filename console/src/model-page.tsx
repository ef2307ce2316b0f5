import { useEffect, useMemo, useState } from 'react';
import { api, type ConsoleModel, isApiError } from './api.ts';
import { calibrationStatus, type ModelCalibration, worseThanUniform } from './calibration-model.ts';
import { parseBlocks, parseInline } from './markdown.ts';
import { InlineView, MarkdownView } from './markdown-view.tsx';
import { type MetricRow, MetricTable } from './metric-table.tsx';
import { Alert, formatNumber, PageHeading } from './ui.tsx';

const fmt = (v: number | null | undefined) => (v === null || v === undefined ? '–' : v.toFixed(3));

/** The card's evaluation: per question type, rows of training tasks ("seen") and tasks never trained on ("unseen"). */
function EvaluationTable({ evaluation }: { evaluation: NonNullable<ConsoleModel['card']>['evaluation'] }) {
  const rows: MetricRow[] = [];
  for (const [type, e] of Object.entries(evaluation)) {
    for (const [family, c] of [
      ['seen', e.seen],
      ['unseen', e.unseen],
    ] as const) {
      if (!c) continue;
      rows.push({
        key: `${type}-${family}`,
        name: (
          <>
            {type} <span className="muted">({family})</span>
          </>
        ),
        cells: [
          formatNumber(c.model.n),
          fmt(c.model.brier),
          fmt(c.prior?.brier),
          fmt(c.uniform?.brier),
          fmt(c.model.accuracy),
          fmt(c.model.ece),
        ],
      });
    }
  }
  return (
    <MetricTable
      caption="Brier score (lower is better) against the majority prior and the uniform answer; “seen”: rows of training tasks, each scored by a head that did not train on it; “unseen”: tasks never trained on."
      corner="Type"
      columns={['Rows', 'Brier', 'Prior', 'Uniform', 'Accuracy', 'ECE'].map((label) => ({ label }))}
      rows={rows}
    />
  );
}

function CalibrationSection({ calibration }: { calibration: ModelCalibration }) {
  const status = calibrationStatus(calibration);
  return (
    <>
      <h2>Calibration</h2>
      <p data-testid="calibration-status">
        <InlineView nodes={parseInline(status)} />
      </p>
      {calibration.report.length > 0 ? (
        <MetricTable
          testId="calibration-report"
          caption="Brier score (lower is better) of the model's raw answers (before), calibrated (after), and with each source set answered by a calibration fitted without it (held out), against the uniform answer; accuracy and ECE (with the ECE a perfectly calibrated model would show by chance at these rows)."
          corner="Type"
          columns={[
            'Set',
            'Rows',
            'Uniform',
            'Brier before',
            'After',
            'Held out',
            'Accuracy',
            'ECE before',
            'After (floor)',
          ].map((label) => ({ label }))}
          rows={calibration.report.map((r) => ({
            key: `${r.type}/${r.set ?? ''}`,
            name: r.type,
            className: worseThanUniform(r) ? 'worse' : undefined,
            cells: [
              r.set ?? 'all',
              formatNumber(r.n),
              fmt(r.uniform_brier),
              fmt(r.before.brier),
              fmt(r.after.brier),
              fmt(r.held_out?.brier),
              fmt(r.before.accuracy),
              fmt(r.before.ece),
              <>
                {fmt(r.after.ece)} <span className="muted">({fmt(r.after.ece_floor)})</span>
              </>,
            ],
          }))}
        />
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
                <EvaluationTable evaluation={model.card.evaluation} />
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
