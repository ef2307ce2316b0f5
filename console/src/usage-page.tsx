import { useEffect, useId, useState } from 'react';
import { api, isApiError, type UsageCounts, type UsageDay, type UsageReport } from './api.ts';
import { labelEvery } from './chart-model.ts';
import { ChartFigure, useWidth } from './charts.tsx';
import { MetricTable } from './metric-table.tsx';
import { Alert, formatNumber, Link, PageHeading } from './ui.tsx';
import { axisTicks, daysWithTraffic } from './usage-model.ts';

const WINDOWS = [7, 30, 90] as const;

interface Series {
  label: string;
  className: string;
  values: number[];
}

/** A bar chart in inline SVG: one group per day, stacked series, labelled axes, a text alternative. */
function BarChart({ title, days, series }: { title: string; days: string[]; series: Series[] }) {
  const [box, width] = useWidth(720);
  const height = 200;
  const pad = { left: 48, right: 8, top: 12, bottom: 28 };
  const totals = days.map((_, i) => series.reduce((a, s) => a + (s.values[i] ?? 0), 0));
  const { top: max, ticks } = axisTicks(Math.max(0, ...totals));
  const innerW = width - pad.left - pad.right;
  const innerH = height - pad.top - pad.bottom;
  const step = innerW / Math.max(1, days.length);
  const bar = Math.max(1, step * 0.7);
  const every = labelEvery(days.length, innerW);
  const sum = totals.reduce((a, b) => a + b, 0);
  return (
    <ChartFigure
      box={box}
      className="chart"
      svgClassName="chart-svg"
      caption={
        <>
          {title} <span className="muted">({formatNumber(sum)} in the window)</span>
        </>
      }
      title={title}
      description={`Daily values from ${days[0] ?? ''} to ${days.at(-1) ?? ''}; highest ${formatNumber(Math.max(0, ...totals))}. The table below lists every day with traffic.`}
      width={width}
      height={height}
      legend={series.length > 1 ? series.map((s) => ({ className: s.className, label: s.label })) : undefined}
    >
      {ticks.map((t) => {
        const y = pad.top + innerH - (t / max) * innerH;
        return (
          <g key={t}>
            <line x1={pad.left} x2={width - pad.right} y1={y} y2={y} className="grid" />
            <text x={pad.left - 6} y={y + 4} textAnchor="end" className="axis">
              {formatNumber(t)}
            </text>
          </g>
        );
      })}
      {days.map((d, i) => {
        let y = pad.top + innerH;
        const x = pad.left + i * step + (step - bar) / 2;
        return (
          <g key={d}>
            {series.map((s) => {
              const v = s.values[i] ?? 0;
              const h = (v / max) * innerH;
              y -= h;
              return v > 0 ? (
                <rect key={s.label} x={x} y={y} width={bar} height={h} className={s.className}>
                  <title>{`${d} · ${s.label}: ${formatNumber(v)}`}</title>
                </rect>
              ) : null;
            })}
            {i % every === 0 ? (
              <text x={x + bar / 2} y={height - 8} textAnchor="middle" className="axis">
                {d.slice(5)}
              </text>
            ) : null}
          </g>
        );
      })}
    </ChartFigure>
  );
}

function subtract(a: UsageCounts, b: UsageCounts): UsageCounts {
  return {
    requests: a.requests - b.requests,
    input_tokens: a.input_tokens - b.input_tokens,
    output_tokens: a.output_tokens - b.output_tokens,
    questions: a.questions - b.questions,
    errors: a.errors - b.errors,
    teacher_calls: a.teacher_calls - b.teacher_calls,
  };
}

export function UsagePage() {
  const [days, setDays] = useState<number>(30);
  const [scope, setScope] = useState<string>('all');
  const [report, setReport] = useState<UsageReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const windowId = useId();
  const scopeId = useId();

  useEffect(() => {
    let live = true;
    setError(null);
    api<UsageReport>(`/control/v1/usage?days=${days}`).then(
      (r) => {
        if (live) setReport(r);
      },
      (err: unknown) => {
        if (live) setError(isApiError(err) ? err.message : 'could not load usage');
      },
    );
    return () => {
      live = false;
    };
  }, [days]);

  const selectedKey = report?.keys.find((k) => k.id === scope);
  const daily: UsageDay[] = selectedKey ? selectedKey.daily : (report?.daily ?? []);
  const totals = selectedKey ? selectedKey.totals : report?.totals;
  const dates = daily.map((d) => d.date);
  const busyDays = daysWithTraffic(daily);
  const keyTotals = report?.keys.reduce(
    (acc, k) => subtract(acc, k.totals),
    report?.totals ?? { requests: 0, input_tokens: 0, output_tokens: 0, questions: 0, errors: 0, teacher_calls: 0 },
  );

  return (
    <section>
      <PageHeading title="Usage">
        <p className="lead">Requests and tokens per UTC day, for the whole account or one key.</p>
      </PageHeading>
      <div className="toolbar">
        <div className="field compact">
          <label htmlFor={windowId}>Window</label>
          <select id={windowId} value={days} onChange={(e) => setDays(Number(e.target.value))}>
            {WINDOWS.map((w) => (
              <option key={w} value={w}>
                Last {w} days
              </option>
            ))}
          </select>
        </div>
        <div className="field compact">
          <label htmlFor={scopeId}>Show</label>
          <select id={scopeId} value={scope} onChange={(e) => setScope(e.target.value)}>
            <option value="all">All usage (keys and playground)</option>
            {report?.keys.map((k) => (
              <option key={k.id} value={k.id}>
                Key {k.name} ({k.prefix}…)
              </option>
            ))}
          </select>
        </div>
      </div>
      {error ? <Alert>{error}</Alert> : null}
      {!report && !error ? <p aria-busy="true">Loading usage…</p> : null}
      {report && totals ? (
        <>
          <dl className="stats">
            <div>
              <dt>Requests</dt>
              <dd data-testid="total-requests">{formatNumber(totals.requests)}</dd>
            </div>
            <div>
              <dt>Input tokens</dt>
              <dd>{formatNumber(totals.input_tokens)}</dd>
            </div>
            <div>
              <dt>Output tokens</dt>
              <dd>{formatNumber(totals.output_tokens)}</dd>
            </div>
            <div>
              <dt>Errors</dt>
              <dd>{formatNumber(totals.errors)}</dd>
            </div>
            <div>
              <dt>Teacher calls</dt>
              <dd data-testid="total-teacher-calls">{formatNumber(totals.teacher_calls)}</dd>
            </div>
          </dl>
          {busyDays.length === 0 ? (
            <div className="empty" data-testid="no-traffic">
              <p>
                No traffic in the last {days} days. Make a call with one of your <Link to="/keys">API keys</Link>, or
                run a question in the <Link to="/playground">playground</Link>; usage shows here within seconds.
              </p>
            </div>
          ) : (
            <>
              <BarChart
                title="Requests per day"
                days={dates}
                series={[{ label: 'Requests', className: 's-req', values: daily.map((d) => d.requests) }]}
              />
              <BarChart
                title="Tokens per day"
                days={dates}
                series={[
                  { label: 'Input tokens', className: 's-in', values: daily.map((d) => d.input_tokens) },
                  { label: 'Output tokens', className: 's-out', values: daily.map((d) => d.output_tokens) },
                ]}
              />
            </>
          )}
          {scope === 'all' && report.keys.length > 0 ? (
            <MetricTable
              caption="By key"
              corner="Key"
              columns={KEY_COLUMNS}
              rows={[
                ...report.keys.map((k) => ({
                  key: k.id,
                  name: (
                    <>
                      {k.name} <code>{k.prefix}…</code>
                    </>
                  ),
                  cells: keyCountCells(k.totals),
                })),
                ...(keyTotals && keyTotals.requests > 0
                  ? [{ key: 'rest', name: 'Playground and revoked keys', cells: keyCountCells(keyTotals) }]
                  : []),
              ]}
            />
          ) : null}
          {busyDays.length > 0 ? (
            <MetricTable
              caption={
                <>
                  Days with traffic{' '}
                  <span className="muted">
                    ({busyDays.length} of the last {days} days; the others had none)
                  </span>
                </>
              }
              corner="Day (UTC)"
              columns={COUNT_COLUMNS}
              rows={busyDays.map((d) => ({
                key: d.date,
                name: d.date,
                cells: [d.requests, d.questions, d.input_tokens, d.output_tokens, d.errors, d.teacher_calls].map(
                  formatNumber,
                ),
              }))}
            />
          ) : null}
          {scope === 'all' && report.jobs.length > 0 ? (
            <MetricTable
              caption={
                <>
                  Teacher calls of distillation jobs{' '}
                  <span className="muted">(each call a job sent its teacher, counted in the account's totals)</span>
                </>
              }
              corner="Job"
              columns={[{ label: 'Teacher' }, { label: 'Teacher calls' }, { label: 'Days with calls' }]}
              rows={report.jobs.map((j) => ({
                key: j.id,
                name: <code>{j.id}</code>,
                cells: [
                  j.teacher,
                  formatNumber(j.totals.teacher_calls),
                  String(j.daily.filter((d) => d.teacher_calls > 0).length),
                ],
              }))}
            />
          ) : null}
        </>
      ) : null}
    </section>
  );
}

const COUNT_COLUMNS = ['Requests', 'Questions', 'Input tokens', 'Output tokens', 'Errors', 'Teacher calls'].map(
  (label) => ({ label }),
);
const KEY_COLUMNS = COUNT_COLUMNS.filter((c) => c.label !== 'Questions');

/** The by-key table's cells for one row of counts (KEY_COLUMNS). */
function keyCountCells(counts: UsageCounts): string[] {
  return [counts.requests, counts.input_tokens, counts.output_tokens, counts.errors, counts.teacher_calls].map(
    formatNumber,
  );
}
