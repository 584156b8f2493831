/**
 * Pieces the organization settings sections share: a save status, a form that adds, the
 * permission selects.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { t } from "../../i18n.ts";
import { SaveStatus, Select, type SaveState } from "../Form.tsx";
import { groupList, type GroupSettingValue } from "../../state/groups.ts";
import { SYSTEM_GROUPS } from "../../state/org.ts";

export { FormError, useSave as useStatus } from "../Form.tsx";

/** The save status of a section or a row's action: "Saving…", "Saved" or the server's error. */
export function StatusText({ status }: { status: SaveState }) {
  return <SaveStatus state={status} />;
}

/**
 * A form that adds something (a linkifier, a profile field, an emoji...): named by its heading,
 * its fields, then its buttons (`submit` first) and the save status.
 */
export function AddForm({
  title,
  submit,
  disabled,
  status,
  onSubmit,
  children,
  buttons,
  after,
}: {
  title: string;
  submit: string;
  disabled: boolean;
  status: SaveState;
  onSubmit: () => void;
  children: ComponentChildren;
  buttons?: ComponentChildren;
  after?: ComponentChildren;
}) {
  return (
    <form
      class="org-form"
      aria-label={title}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <h3>{title}</h3>
      {children}
      <div class="org-actions">
        <button type="submit" class="primary" disabled={disabled}>
          {submit}
        </button>
        {buttons}
        <StatusText status={status} />
      </div>
      {after}
    </form>
  );
}

/**
 * The edited copy of settings saved as a whole (by their PATCH /realm names): the form's values,
 * a setter, and the changes from the saved values. A change saved elsewhere (another
 * administrator) replaces the copy.
 */
export function useDraft<T extends Record<string, unknown>>(saved: T) {
  const [form, setForm] = useState(saved);
  useEffect(() => setForm(saved), [JSON.stringify(saved)]);
  const changes: Partial<T> = {};
  for (const k in saved) if (form[k] !== saved[k]) changes[k] = form[k];
  return {
    form,
    set: (patch: Partial<T>) => setForm({ ...form, ...patch }),
    changes,
    changed: Object.keys(changes).length > 0,
  };
}

/** A form saved as a whole by "Save changes" (administrators only: others see it read-only). */
export function SaveForm({
  admin,
  changed,
  status,
  onSubmit,
  children,
}: {
  admin: boolean;
  changed: boolean;
  status: SaveState;
  onSubmit: () => void;
  children: ComponentChildren;
}) {
  return (
    <form
      class="org-form"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      {children}
      {admin && (
        <div class="org-actions">
          <button type="submit" class="primary" disabled={!changed}>
            {t("Save changes")}
          </button>
          <StatusText status={status} />
        </div>
      )}
    </form>
  );
}

export function AdminOnly() {
  return <p class="org-note">{t("Only organization administrators can change these settings.")}</p>;
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="org-section" aria-label={title}>
      <h2 class="org-title">{title}</h2>
      {children}
    </section>
  );
}

/** The system groups, in Zulip's order, as a permission setting offers them. */
export function systemGroups(withNobody = false) {
  const order = SYSTEM_GROUPS.filter(
    (n) => n !== "role:internet" && (withNobody || n !== "role:nobody"),
  );
  return groupList()
    .filter((g) => g.is_system_group && order.includes(g.name))
    .sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
}

export function groupLabel(name: string): string {
  const labels: Record<string, () => string> = {
    "role:owners": () => t("Owners"),
    "role:administrators": () => t("Administrators"),
    "role:moderators": () => t("Moderators"),
    "role:fullmembers": () => t("Full members"),
    "role:members": () => t("Members"),
    "role:everyone": () => t("Everyone"),
    "role:internet": () => t("Everyone on the internet"),
    "role:nobody": () => t("Nobody"),
  };
  return labels[name]?.() ?? name;
}

/** A group-setting value as a select of system groups ("Custom" for anything else). */
export function GroupSelect({
  label,
  value,
  disabled,
  onChange,
}: {
  label: string;
  value: GroupSettingValue | undefined;
  disabled: boolean;
  onChange: (groupId: number) => void;
}) {
  const groups = systemGroups(true);
  const current = typeof value === "number" ? value : undefined;
  const known = groups.some((g) => g.id === current);
  const options = groups.map((g) => ({ value: String(g.id), label: groupLabel(g.name) }));
  return (
    <Select
      label={label}
      value={known ? String(current) : ""}
      disabled={disabled}
      options={known ? options : [{ value: "", label: t("Custom"), disabled: true }, ...options]}
      onChange={(v) => onChange(Number(v))}
    />
  );
}

/** Zulip's role values and names. */
export type Role = 100 | 200 | 300 | 400 | 600;
export const ROLES: readonly { value: Role; label: () => string }[] = [
  { value: 100, label: () => t("Organization owner") },
  { value: 200, label: () => t("Organization administrator") },
  { value: 300, label: () => t("Moderator") },
  { value: 400, label: () => t("Member") },
  { value: 600, label: () => t("Guest") },
];
