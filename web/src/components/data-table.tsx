// One table shape for the dashboard's read-only lists: a header row, then a row per item. Every
// cell carries data-label, which the phone layout in styles.css prints before the value.
import type { ComponentChildren } from 'preact';

export interface Column<T> {
  label: string;
  /** Right-aligned figures (the header and the cells). */
  num?: boolean;
  /** More classes for the cells (e.g. mono). */
  class?: string;
  title?(row: T): string | null | undefined;
  render(row: T): ComponentChildren;
}

/** What a row may carry besides its cells: a class, and data-* hooks for tests and styles. */
export type RowAttributes = { class?: string | undefined } & { [name: `data-${string}`]: string | undefined };

function cellClass(column: { num?: boolean; class?: string }): string | undefined {
  return [column.num ? 'num' : '', column.class ?? ''].filter(Boolean).join(' ') || undefined;
}

export function DataTable<T>(props: {
  columns: Column<T>[];
  rows: readonly T[];
  rowKey(row: T): string;
  row?(row: T): RowAttributes;
  /** Shown instead of the table when there are no rows; without it an empty table stays. */
  empty?: ComponentChildren;
  /** More classes for the table, after "table". */
  class?: string;
  'aria-label'?: string;
}) {
  const { columns, rows } = props;
  if (rows.length === 0 && props.empty !== undefined) return <>{props.empty}</>;
  return (
    <table class={props.class ? `table ${props.class}` : 'table'} aria-label={props['aria-label']}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column.label} scope="col" class={column.num ? 'num' : undefined}>
              {column.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={props.rowKey(row)} {...props.row?.(row)}>
            {columns.map((column) => (
              <td
                key={column.label}
                data-label={column.label}
                class={cellClass(column)}
                title={column.title?.(row) ?? undefined}
              >
                {column.render(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
