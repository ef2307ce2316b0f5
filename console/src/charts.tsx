/**
 * The console's charts in inline SVG, each with a text alternative: the reliability diagram
 * (accuracy against confidence) and live answers' Brier and ECE by week. Each is drawn at the width
 * it is shown at (useWidth), so that its labels keep their size on a phone.
 */
import { type RefObject, useId, useLayoutEffect, useRef, useState } from 'react';
import type { TemplateCalibration } from './api.ts';
import { labelEvery } from './chart-model.ts';
import { type Bin, metric, reliabilityPoints } from './teach-model.ts';

/** The content width (inside its padding) of the element the ref is put on, in CSS pixels, kept up to date; `fallback` until measured. */
export function useWidth(fallback: number): [RefObject<HTMLElement | null>, number] {
  const ref = useRef<HTMLElement>(null);
  const [width, setWidth] = useState(fallback);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => {
      const style = getComputedStyle(el);
      const w = Math.floor(
        el.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight),
      );
      if (w > 0) setWidth(w);
    };
    update();
    const observer = new ResizeObserver(update);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

export function Reliability(props: {
  title: string;
  summary: string;
  before: Bin[];
  after: Bin[];
  labels: [string, string];
}) {
  const id = useId();
  const [box, size] = useWidth(200);
  const pad = 28;
  const inner = size - 2 * pad;
  const before = reliabilityPoints(props.before);
  const after = reliabilityPoints(props.after);
  const path = (pts: { x: number; y: number }[]) =>
    pts.map((p, i) => `${i === 0 ? 'M' : 'L'}${pad + p.x * inner},${pad + (1 - p.y) * inner}`).join(' ');
  return (
    <figure className="chart reliability" ref={box}>
      <figcaption id={`${id}-t`}>{props.title}</figcaption>
      <svg
        viewBox={`0 0 ${size} ${size}`}
        width={size}
        height={size}
        role="img"
        aria-labelledby={`${id}-t ${id}-d`}
        className="reliability-svg"
      >
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

/** Brier and ECE of live answers by week, a line chart. */
export function WeeklyChart({ c }: { c: TemplateCalibration }) {
  const id = useId();
  const [box, width] = useWidth(360);
  const height = 160;
  const pad = { left: 36, right: 8, top: 10, bottom: 24 };
  const weeks = c.weekly;
  const max = Math.max(0.05, ...weeks.map((w) => Math.max(w.brier, w.ece)));
  const x = (i: number) =>
    pad.left + (weeks.length <= 1 ? 0.5 : i / (weeks.length - 1)) * (width - pad.left - pad.right);
  const y = (v: number) => pad.top + (1 - v / max) * (height - pad.top - pad.bottom);
  const every = labelEvery(weeks.length, width - pad.left - pad.right);
  const line = (key: 'brier' | 'ece') => weeks.map((w, i) => `${i === 0 ? 'M' : 'L'}${x(i)},${y(w[key])}`).join(' ');
  return (
    <figure className="chart weekly" ref={box}>
      <figcaption id={`${id}-t`}>Brier and ECE of live answers by week</figcaption>
      <svg
        viewBox={`0 0 ${width} ${height}`}
        width={width}
        height={height}
        role="img"
        aria-labelledby={`${id}-t ${id}-d`}
        className="weekly-svg"
      >
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
            {i % every === 0 ? (
              <text x={x(i)} y={height - 6} textAnchor="middle" className="axis">
                {w.week.slice(5)}
              </text>
            ) : null}
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
