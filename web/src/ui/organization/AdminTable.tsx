/**
 * The table the organization pages share (channels, users, linkifiers, profile fields, emoji,
 * invitations): its columns, an optional filter box, a page at a time (50 rows: 10,000 users stay
 * cheap), a note in place of an empty table, and each row's action buttons, named for their row
 * ("Edit #Verona"), one of which may ask first (a Confirm dialog).
 */
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { t } from "../../i18n.ts";
import { Confirm } from "../Dialog.tsx";

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
}

/** A row's button: its text, its accessible name, and what it does (at once or once confirmed). */
export interface RowAction {
  label: string;
  name: string;
  danger?: boolean;
  onClick?: () => void;
  confirm?: { title: string; body: ComponentChildren; onConfirm: () => void };
}

const PAGE = 50;

export function AdminTable<T>({
  rows,
  columns,
  rowKey,
  actions,
  filter,
  empty,
  loading,
  before,
}: {
  /** undefined while loading: no table yet (`loading` says so where given). */
  rows: readonly T[] | undefined;
  columns: readonly Column<T>[];
  rowKey: (row: T) => string | number;
  /** The row's buttons, in an "Actions" column (left out when not given). */
  actions?: (row: T) => readonly RowAction[];
  /** A filter box, named `label`, keeping the rows for which `match(row, query)` (lower-cased). */
  filter?: { label: string; match: (row: T, query: string) => boolean };
  /** Shown instead of the table when no row is left. */
  empty?: string;
  loading?: string;
  /** What stands between the filter and the table (the page's status line). */
  before?: ComponentChildren;
}) {
  const [query, setQuery] = useState("");
  const [start, setStart] = useState(0);
  const [confirming, setConfirming] = useState<RowAction | undefined>(undefined);
  const shown = useMemo(() => {
    const q = query.trim().toLowerCase();
    return !rows || !q || !filter ? rows : rows.filter((r) => filter.match(r, q));
  }, [rows, query]);
  useEffect(() => setStart(0), [query]);
  const total = shown?.length ?? 0;
  const from = start < total ? start : Math.max(0, Math.floor((total - 1) / PAGE) * PAGE);
  const page = shown?.slice(from, from + PAGE) ?? [];
  return (
    <>
      {filter && (
        <input
          type="search"
          class="org-filter"
          aria-label={filter.label}
          placeholder={filter.label}
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
      )}
      {before}
      {shown === undefined ? (
        loading && <p class="org-note">{loading}</p>
      ) : total === 0 && empty ? (
        <p class="org-note">{empty}</p>
      ) : (
        <table class="org-table">
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c.header} scope="col">
                  {c.header}
                </th>
              ))}
              {actions && <th scope="col">{t("Actions")}</th>}
            </tr>
          </thead>
          <tbody>
            {page.map((row) => (
              <tr key={rowKey(row)}>
                {columns.map((c) => (
                  <td key={c.header}>{c.cell(row)}</td>
                ))}
                {actions && (
                  <td class="org-row-actions">
                    {actions(row).map((a) => (
                      <button
                        key={a.label}
                        type="button"
                        class={a.danger ? "danger" : undefined}
                        aria-label={a.name}
                        onClick={() => (a.confirm ? setConfirming(a) : a.onClick?.())}
                      >
                        {a.label}
                      </button>
                    ))}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {total > PAGE && (
        <div class="org-pager">
          <span>
            {t("{from}–{to} of {total}", { from: from + 1, to: from + page.length, total })}
          </span>
          <button type="button" disabled={from === 0} onClick={() => setStart(from - PAGE)}>
            {t("Previous")}
          </button>
          <button
            type="button"
            disabled={from + PAGE >= total}
            onClick={() => setStart(from + PAGE)}
          >
            {t("Next")}
          </button>
        </div>
      )}
      {confirming?.confirm && (
        <Confirm
          title={confirming.confirm.title}
          action={confirming.label}
          danger
          onClose={() => setConfirming(undefined)}
          onConfirm={confirming.confirm.onConfirm}
        >
          {confirming.confirm.body}
        </Confirm>
      )}
    </>
  );
}
