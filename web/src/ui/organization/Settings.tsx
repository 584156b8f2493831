/**
 * Organization settings (`#organization/organization-settings`): message editing, its time limit,
 * read receipts, as Zulip's "Message editing" and "Message feed" settings.
 */
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { myRole, realmSettings } from "../../state/org.ts";
import { Checkbox, Select } from "../Form.tsx";
import { AdminOnly, SaveForm, Section, useDraft, useStatus } from "./common.tsx";

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
  const { form, set, changes, changed } = useDraft({
    allow_message_editing: r.allow_message_editing !== false,
    message_content_edit_limit_seconds:
      (r.message_content_edit_limit_seconds as number | null | undefined) ?? null,
    enable_read_receipts: r.enable_read_receipts === true,
  });
  const [status, run] = useStatus();
  const limit = form.message_content_edit_limit_seconds;
  const limits = EDIT_LIMITS.some((l) => l.seconds === limit)
    ? EDIT_LIMITS
    : [...EDIT_LIMITS, { seconds: limit, label: () => t("{n} seconds", { n: limit ?? 0 }) }];
  return (
    <Section title={t("Organization settings")}>
      {!admin && <AdminOnly />}
      <SaveForm
        admin={admin}
        changed={changed}
        status={status}
        onSubmit={() => {
          const limit = changes.message_content_edit_limit_seconds;
          const body = {
            ...changes,
            message_content_edit_limit_seconds: limit === null ? ("unlimited" as const) : limit,
          };
          void run(() => call(api.PATCH("/realm", { body })));
        }}
      >
        <fieldset disabled={!admin}>
          <legend>{t("Message editing")}</legend>
          <Checkbox
            label={t("Allow message editing")}
            checked={form.allow_message_editing}
            onChange={(v) => set({ allow_message_editing: v })}
          />
          <Select
            label={t("Time limit for editing messages")}
            value={String(limit)}
            disabled={!form.allow_message_editing}
            options={limits.map((l) => ({ value: String(l.seconds), label: l.label() }))}
            onChange={(v) =>
              set({ message_content_edit_limit_seconds: v === "null" ? null : Number(v) })
            }
          />
        </fieldset>
        <fieldset disabled={!admin}>
          <legend>{t("Message feed")}</legend>
          <Checkbox
            label={t("Enable read receipts")}
            checked={form.enable_read_receipts}
            onChange={(v) => set({ enable_read_receipts: v })}
          />
        </fieldset>
      </SaveForm>
    </Section>
  );
}
