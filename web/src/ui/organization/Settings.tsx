/**
 * Organization settings (`#organization/organization-settings`): message editing, its time limit,
 * read receipts, as Zulip's "Message editing" and "Message feed" settings.
 */
import { useEffect, useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { myRole, realmSettings } from "../../state/org.ts";
import { Checkbox, Select } from "../Form.tsx";
import { AdminOnly, SaveForm, Section, useStatus } from "./common.tsx";

/** Zulip's choices for how long a message may be edited (seconds; null: any time). */
const EDIT_LIMITS: readonly { seconds: number | null; label: () => string }[] = [
  { seconds: null, label: () => t("Any time") },
  { seconds: 120, label: () => t("2 minutes") },
  { seconds: 600, label: () => t("10 minutes") },
  { seconds: 3600, label: () => t("1 hour") },
  { seconds: 86400, label: () => t("1 day") },
  { seconds: 604800, label: () => t("1 week") },
];

export function SettingsSection() {
  const admin = myRole.value.isAdmin;
  const r = realmSettings.value;
  const saved = {
    allowEditing: r.allow_message_editing !== false,
    limit: (r.message_content_edit_limit_seconds as number | null | undefined) ?? null,
    readReceipts: r.enable_read_receipts === true,
  };
  const [form, setForm] = useState(saved);
  const [status, run] = useStatus();
  useEffect(() => setForm(saved), [saved.allowEditing, saved.limit, saved.readReceipts]);
  const limits = EDIT_LIMITS.some((l) => l.seconds === form.limit)
    ? EDIT_LIMITS
    : [
        ...EDIT_LIMITS,
        { seconds: form.limit, label: () => t("{n} seconds", { n: form.limit ?? 0 }) },
      ];
  const changed =
    form.allowEditing !== saved.allowEditing ||
    form.limit !== saved.limit ||
    form.readReceipts !== saved.readReceipts;
  return (
    <Section title={t("Organization settings")}>
      {!admin && <AdminOnly />}
      <SaveForm
        admin={admin}
        changed={changed}
        status={status}
        onSubmit={() => {
          const body: {
            allow_message_editing?: boolean;
            message_content_edit_limit_seconds?: number | "unlimited";
            enable_read_receipts?: boolean;
          } = {};
          if (form.allowEditing !== saved.allowEditing)
            body.allow_message_editing = form.allowEditing;
          if (form.limit !== saved.limit)
            body.message_content_edit_limit_seconds = form.limit ?? "unlimited";
          if (form.readReceipts !== saved.readReceipts)
            body.enable_read_receipts = form.readReceipts;
          void run(() => call(api.PATCH("/realm", { body })));
        }}
      >
        <fieldset disabled={!admin}>
          <legend>{t("Message editing")}</legend>
          <Checkbox
            label={t("Allow message editing")}
            checked={form.allowEditing}
            onChange={(allowEditing) => setForm({ ...form, allowEditing })}
          />
          <Select
            label={t("Time limit for editing messages")}
            value={String(form.limit)}
            disabled={!form.allowEditing}
            options={limits.map((l) => ({ value: String(l.seconds), label: l.label() }))}
            onChange={(v) => setForm({ ...form, limit: v === "null" ? null : Number(v) })}
          />
        </fieldset>
        <fieldset disabled={!admin}>
          <legend>{t("Message feed")}</legend>
          <Checkbox
            label={t("Enable read receipts")}
            checked={form.readReceipts}
            onChange={(readReceipts) => setForm({ ...form, readReceipts })}
          />
        </fieldset>
      </SaveForm>
    </Section>
  );
}
