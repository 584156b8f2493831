/**
 * Settings › Profile (Zulip's settings_account "Profile"): the full name, the avatar, and the
 * custom profile fields of the organization. The name saves with its button; a profile field
 * saves when it is left (or chosen).
 */
import { useEffect, useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { me, users } from "../../state/model.ts";
import { profileFields, realmSettings, type ProfileField } from "../../state/settings.ts";
import { Field, FormSection, SaveStatus, Select, useSave } from "../Form.tsx";
import { AvatarSettings } from "./AvatarSettings.tsx";

/** Field types of Zulip's custom profile fields (zerver/models/custom_profile_fields.py). */
const SELECT = 3;
const USER = 6;
const EXTERNAL_ACCOUNT = 7;

function ProfileFieldControl({ field, value }: { field: ProfileField; value: string }) {
  const [status, save] = useSave();
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  const put = (v: string) =>
    void save(() =>
      call(
        api.PATCH("/users/me/profile_data", {
          body: { data: [{ id: field.id, value: v === "" ? null : v }] } as never,
        }),
      ),
    );
  let control;
  if (field.type === SELECT) {
    let choices: Record<string, { text: string; order: string }> = {};
    try {
      choices = JSON.parse(field.field_data) as typeof choices;
    } catch {
      // no choices
    }
    control = (
      <Select
        label={field.name}
        hint={field.hint || undefined}
        value={text}
        options={[
          { value: "", label: t("Not set") },
          ...Object.entries(choices)
            .sort((a, b) => Number(a[1].order) - Number(b[1].order))
            .map(([k, c]) => ({ value: k, label: c.text })),
        ]}
        onChange={(v) => {
          setText(v);
          put(v);
        }}
      />
    );
  } else
    control = (
      <div
        onFocusOut={() => {
          if (text !== value) put(text.trim());
        }}
      >
        <Field
          label={field.name}
          hint={field.hint || undefined}
          value={text}
          type={field.type === 5 ? "url" : "text"}
          onInput={setText}
        />
      </div>
    );
  return (
    <div class="profile-field">
      {control}
      {status.kind !== "idle" && <SaveStatus state={status} />}
    </div>
  );
}

function FullName() {
  const mine = users.value.get(me.value.id);
  const current = mine?.full_name ?? me.value.fullName;
  const [name, setName] = useState(current);
  useEffect(() => setName(current), [current]);
  const [status, save] = useSave();
  const disabled = realmSettings.value.realm_name_changes_disabled === true && !me.value.isAdmin;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void save(() => call(api.PATCH("/settings", { body: { full_name: name.trim() } })));
      }}
    >
      <Field
        label={t("Name")}
        value={name}
        onInput={setName}
        disabled={disabled}
        maxLength={100}
        hint={disabled ? t("Name changes are disabled in this organization.") : undefined}
      />
      <div class="settings-row">
        <button type="submit" class="primary" disabled={disabled || name.trim() === current}>
          {t("Save name")}
        </button>
        <SaveStatus state={status} />
      </div>
    </form>
  );
}

export function ProfileSection() {
  const mine = users.value.get(me.value.id);
  const values = ((mine as { profile_data?: Record<string, { value: string }> } | undefined)
    ?.profile_data ?? {}) as Record<string, { value: string }>;
  const fields = [...profileFields.value]
    .filter((f) => f.type !== USER && f.type !== EXTERNAL_ACCOUNT)
    .sort((a, b) => a.order - b.order);
  return (
    <div>
      <FormSection title={t("Your name")}>
        <FullName />
      </FormSection>
      <FormSection title={t("Profile picture")}>
        <AvatarSettings />
      </FormSection>
      {fields.length > 0 && (
        <FormSection title={t("Profile fields")}>
          {fields.map((f) => (
            <ProfileFieldControl
              key={f.id}
              field={f}
              value={String(values[String(f.id)]?.value ?? "")}
            />
          ))}
        </FormSection>
      )}
    </div>
  );
}
