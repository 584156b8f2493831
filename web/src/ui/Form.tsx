/**
 * Small shared pieces of the settings forms (personal settings, organization settings): a
 * labelled field, a checkbox, a select, and the "Saving…/Saved" status. Each control is labelled
 * by its visible text (its accessible name is Zulip's wording), and each reports a change through
 * `onChange`, which the caller saves (usually at once, as Zulip's settings do).
 */
import type { ComponentChildren } from "preact";
import { useId, useRef, useState } from "preact/hooks";
import { errorText } from "../api.ts";
import { t } from "../i18n.ts";
import { Dialog } from "./Dialog.tsx";
import "./Form.css";

/** A titled group of settings (Zulip's `settings-subsection`). */
export function FormSection({ title, children }: { title: string; children: ComponentChildren }) {
  const id = useId();
  return (
    <section class="form-section" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** A text (or password, email, number...) input with its label above it and an optional hint. */
export function Field({
  label,
  value,
  onInput,
  type = "text",
  hint,
  disabled = false,
  autoComplete,
  maxLength,
  required,
  placeholder,
  rows,
  readOnly,
}: {
  label: string;
  value: string;
  onInput?: (value: string) => void;
  type?: "text" | "password" | "email" | "number" | "url" | "tel";
  hint?: string;
  disabled?: boolean;
  autoComplete?: string;
  maxLength?: number;
  required?: boolean;
  placeholder?: string;
  /** A textarea of this many rows instead of an input. */
  rows?: number;
  readOnly?: boolean;
}) {
  const id = useId();
  const props = {
    id,
    value,
    disabled,
    maxLength,
    required,
    placeholder,
    readOnly,
    "aria-describedby": hint ? `${id}-hint` : undefined,
    onInput: (e: { currentTarget: { value: string } }) => onInput?.(e.currentTarget.value),
  };
  return (
    <div class="form-field">
      <label for={id}>{label}</label>
      {rows ? (
        <textarea rows={rows} {...props} />
      ) : (
        <input
          // preact types `type` as a union per kind of input; any of ours fits.
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
          type={type as "text"}
          autoComplete={autoComplete}
          onFocus={readOnly ? (e) => e.currentTarget.select() : undefined}
          {...props}
        />
      )}
      <Hint id={id} hint={hint} />
    </div>
  );
}

function Hint({ id, hint }: { id: string; hint: string | undefined }) {
  return hint ? (
    <p class="form-hint" id={`${id}-hint`}>
      {hint}
    </p>
  ) : null;
}

/** A checkbox with its label after it. */
export function Checkbox({
  label,
  checked,
  onChange,
  disabled = false,
  hint,
}: {
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  disabled?: boolean;
  hint?: string;
}) {
  const id = useId();
  return (
    <div class="form-check">
      <input
        id={id}
        type="checkbox"
        checked={checked}
        disabled={disabled}
        aria-describedby={hint ? `${id}-hint` : undefined}
        onChange={(e) => onChange(e.currentTarget.checked)}
      />
      <label for={id}>{label}</label>
      <Hint id={id} hint={hint} />
    </div>
  );
}

export interface SelectOption {
  value: string;
  label: string;
  /** Shown but not chosen (a value the choices do not name, such as "Custom"). */
  disabled?: boolean;
}

/** A select with its label above it; values are strings (callers convert numbers). */
export function Select({
  label,
  value,
  options,
  onChange,
  disabled = false,
  hint,
}: {
  label: string;
  value: string;
  options: readonly SelectOption[];
  onChange: (value: string) => void;
  disabled?: boolean;
  hint?: string;
}) {
  const id = useId();
  return (
    <div class="form-field">
      <label for={id}>{label}</label>
      <select
        id={id}
        value={value}
        disabled={disabled}
        aria-describedby={hint ? `${id}-hint` : undefined}
        onChange={(e) => onChange(e.currentTarget.value)}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value} disabled={o.disabled}>
            {o.label}
          </option>
        ))}
      </select>
      <Hint id={id} hint={hint} />
    </div>
  );
}

/** A mistake found before any request, shown as its message. */
export class FormError extends Error {}

export type SaveState =
  { kind: "idle" } | { kind: "saving" } | { kind: "saved" } | { kind: "error"; message: string };

/** The outcome of the last save, announced politely (role=status); errors as alerts. */
export function SaveStatus({ state }: { state: SaveState }) {
  if (state.kind === "error")
    return (
      <p class="save-status error" role="alert" aria-label={state.message}>
        {state.message}
      </p>
    );
  const text = state.kind === "saving" ? t("Saving…") : state.kind === "saved" ? t("Saved") : "";
  // Named by its text as well (a status takes no name from its content).
  return (
    <p class="save-status" role="status" aria-label={text || undefined}>
      {text}
    </p>
  );
}

/**
 * The save status of a group of controls and the function that runs a save with it:
 * `const [status, save] = useSave(); save(() => call(api.PATCH(...)))`.
 */
export function useSave(): [SaveState, (run: () => Promise<unknown>) => Promise<boolean>] {
  const [state, setState] = useState<SaveState>({ kind: "idle" });
  const seq = useRef(0);
  async function save(run: () => Promise<unknown>): Promise<boolean> {
    const mine = ++seq.current;
    setState({ kind: "saving" });
    try {
      await run();
      if (mine === seq.current) setState({ kind: "saved" });
      return true;
    } catch (err) {
      const message = err instanceof FormError ? err.message : errorText(err);
      if (mine === seq.current) setState({ kind: "error", message });
      return false;
    }
  }
  return [state, save];
}

/**
 * A dialog holding a form (an edit dialog): its fields, its save status, Cancel and "Save
 * changes". `save` runs the request; the dialog closes once it succeeded.
 */
export function FormDialog({
  title,
  save,
  onClose,
  children,
}: {
  title: string;
  save: () => Promise<unknown>;
  onClose: (saved: boolean) => void;
  children: ComponentChildren;
}) {
  const [state, run] = useSave();
  return (
    <Dialog title={title} onClose={() => onClose(false)}>
      <form
        class="form-dialog"
        onSubmit={(e) => {
          e.preventDefault();
          void run(save).then((ok) => ok && onClose(true));
        }}
      >
        {children}
        <div class="dialog-buttons">
          <SaveStatus state={state} />
          <button type="button" onClick={() => onClose(false)}>
            {t("Cancel")}
          </button>
          <button type="submit" class="primary">
            {t("Save changes")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** A setting saved on change: a checkbox, or a select when it has options. */
export interface SettingRow {
  name: string;
  label: string;
  options?: readonly SelectOption[];
  /** The select's values are numbers (sent as such). */
  numeric?: boolean;
  hint?: string;
  /** The select's value, when it is not the stored one as a string. */
  value?: string;
}

/** Where the settings are read and saved (the personal settings: state/settings.ts, PATCH /settings). */
export interface SettingStore {
  get: <T>(name: string, fallback: T) => T;
  put: (name: string, value: string | number | boolean) => Promise<unknown>;
}

/**
 * Titled groups of settings, each saved on change, with one save status above them all
 * ("Saving…", "Saved" or the server's error), as Zulip's settings pages.
 */
export function SettingSections({
  store,
  sections,
}: {
  store: SettingStore;
  sections: readonly { title: string; rows: readonly SettingRow[] }[];
}) {
  const [status, save] = useSave();
  const row = (r: SettingRow) =>
    r.options ? (
      <Select
        key={r.name}
        label={r.label}
        hint={r.hint}
        value={r.value ?? String(store.get<string | number>(r.name, ""))}
        options={r.options}
        onChange={(v) => void save(() => store.put(r.name, r.numeric ? Number(v) : v))}
      />
    ) : (
      <Checkbox
        key={r.name}
        label={r.label}
        hint={r.hint}
        checked={store.get(r.name, false)}
        onChange={(v) => void save(() => store.put(r.name, v))}
      />
    );
  return (
    <>
      <SaveStatus state={status} />
      {sections.map((s) => (
        <FormSection key={s.title} title={s.title}>
          {s.rows.map(row)}
        </FormSection>
      ))}
    </>
  );
}
