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
}: {
  label: string;
  value: string;
  onInput: (value: string) => void;
  type?: "text" | "password" | "email" | "number" | "url" | "tel";
  hint?: string;
  disabled?: boolean;
  autoComplete?: string;
  maxLength?: number;
  required?: boolean;
}) {
  const id = useId();
  return (
    <div class="form-field">
      <label for={id}>{label}</label>
      <input
        id={id}
        // preact types `type` as a union per kind of input; any of ours fits.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
        type={type as "text"}
        value={value}
        disabled={disabled}
        autoComplete={autoComplete}
        maxLength={maxLength}
        required={required}
        aria-describedby={hint ? `${id}-hint` : undefined}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      {hint && (
        <p class="form-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
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
      {hint && (
        <p class="form-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}

export interface SelectOption {
  value: string;
  label: string;
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
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {hint && (
        <p class="form-hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}

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
      if (mine === seq.current) setState({ kind: "error", message: errorText(err) });
      return false;
    }
  }
  return [state, save];
}
