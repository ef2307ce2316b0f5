/**
 * The console's one table of metrics (held-out metrics and distillation on the teach page, the
 * calibration report and the card's evaluation on the model page): a caption, one row per subject
 * with its name as the row header, one column per measure. On a phone (styles.css) each row becomes
 * a block: its name, then each measure under its column's label, so that no table scrolls sideways.
 */
import type { ReactNode } from 'react';

export interface MetricColumn {
  label: string;
  /** Marked in the header: this measure decides (e.g. whether an adapter is served). */
  decides?: boolean | undefined;
}

export interface MetricRow {
  key: string;
  /** The row header. */
  name: ReactNode;
  cells: ReactNode[];
  className?: string | undefined;
}

/** A column's label as a stacked row shows it (a deciding column keeps its mark). */
const labelOf = (c: MetricColumn | undefined) => (c?.decides ? `${c.label} *` : c?.label);

export function MetricTable(props: {
  caption: ReactNode;
  /** The header of the row-name column. */
  corner: string;
  columns: MetricColumn[];
  rows: MetricRow[];
  testId?: string | undefined;
}) {
  return (
    <div className="table-wrap stack">
      <table data-testid={props.testId}>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">{props.corner}</th>
            {props.columns.map((c) => (
              <th scope="col" key={c.label} className={c.decides ? 'decides' : undefined}>
                {c.label}
                {c.decides ? <span aria-hidden="true">*</span> : null}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r) => (
            <tr key={r.key} className={r.className}>
              <th scope="row">{r.name}</th>
              {r.cells.map((cell, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: cells are positional, one per column
                <td key={i} data-label={labelOf(props.columns[i])}>
                  {cell}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
