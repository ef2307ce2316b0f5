/**
 * The console's charts in inline SVG, each with a text alternative: the reliability diagram
 * (accuracy against confidence) and live answers' Brier and ECE by week. Each is drawn at the width
 * it is shown at (useWidth), so that its labels keep their size on a phone.
 */
import { type ReactNode, type RefObject, useId, useLayoutEffect, useRef, useState } from 'react';
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

/** One entry of a chart's legend: its swatch's class and its name. */
export interface LegendItem {
  className: string;
  label: string;
}

/**
 * A chart's frame: the figure (measured by `box`), its caption, and the SVG drawn at `width` x
 * `height` CSS pixels, labelled by the caption and a description; the legend under it.
 */
export function ChartFigure(props: {
  box: RefObject<HTMLElement | null>;
  className: string;
  svgClassName: string;
  caption: ReactNode;
  title: string;
  description: string;
  width: number;
  height: number;
  legend?: LegendItem[] | undefined;
  children: ReactNode;
}) {
  const id = useId();
  return (
    <figure className={props.className} ref={props.box}>
      <figcaption id={`${id}-t`}>{props.caption}</figcaption>
      <svg
        viewBox={`0 0 ${props.width} ${props.height}`}
        width={props.width}
        height={props.height}
        role="img"
        aria-labelledby={`${id}-t ${id}-d`}
        className={props.svgClassName}
      >
        <title>{props.title}</title>
        <desc id={`${id}-d`}>{props.description}</desc>
        {props.children}
      </svg>
      {props.legend && props.legend.length > 0 ? (
        <ul className="legend">
          {props.legend.map((item) => (
            <li key={item.label}>
              <span className={`swatch ${item.className}`} aria-hidden="true" /> {item.label}
            </li>
          ))}
        </ul>
      ) : null}
    </figure>
  );
}

export function Reliability(props: {
  title: string;
  summary: string;
  before: Bin[];
  after: Bin[];
  labels: [string, string];
}) {
  const [box, size] = useWidth(200);
  const pad = 28;
  const inner = size - 2 * pad;
  const before = reliabilityPoints(props.before);
  const after = reliabilityPoints(props.after);
  const path = (pts: { x: number; y: number }[]) =>
    pts.map((p, i) => `${i === 0 ? 'M' : 'L'}${pad + p.x * inner},${pad + (1 - p.y) * inner}`).join(' ');
  return (
    <ChartFigure
      box={box}
      className="chart reliability"
      svgClassName="reliability-svg"
      caption={props.title}
      title="Reliability diagram"
      description={`Accuracy against confidence in 15 bins. ${props.summary}; the diagonal is perfect calibration.`}
      width={size}
      height={size}
      legend={[
        ...(props.before.length > 0 ? [{ className: 'before', label: props.labels[0] }] : []),
        { className: 'after', label: props.labels[1] },
      ]}
    >
      <rect x={pad} y={pad} width={inner} height={inner} className="frame" />
      <line x1={pad} y1={pad + inner} x2={pad + inner} y2={pad} className="diagonal" />
      <path d={path(before)} className="curve before" />
      <path d={path(after)} className="curve after" />
      {after.map((p) => (
        <circle key={`${p.x}-${p.y}`} cx={pad + p.x * inner} cy={pad + (1 - p.y) * inner} r={2.5} className="dot after">
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
    </ChartFigure>
  );
}

/** Brier and ECE of live answers by week, a line chart. */
export function WeeklyChart({ c }: { c: TemplateCalibration }) {
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
    <ChartFigure
      box={box}
      className="chart weekly"
      svgClassName="weekly-svg"
      caption="Brier and ECE of live answers by week"
      title="Brier and ECE by week"
      description={weeks
        .map((w) => `week of ${w.week}: ${w.n} outcomes, Brier ${metric(w.brier)}, ECE ${metric(w.ece)}`)
        .join('; ')}
      width={width}
      height={height}
      legend={[
        { className: 'brier', label: 'Brier' },
        { className: 'ece', label: 'ECE' },
      ]}
    >
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
    </ChartFigure>
  );
}
