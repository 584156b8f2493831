/**
 * Custom profile fields (`#organization/profile-field-settings`): the organization's fields (GET
 * /realm/profile_fields), added (POST: name, hint, type) and deleted (DELETE).
 */
import { useEffect, useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { myRole } from "../../state/org.ts";
import { Confirm } from "../Dialog.tsx";
import { Section, StatusText, useStatus } from "./common.tsx";

interface Field {
  id: number;
  name: string;
  hint: string;
  type: number;
}

/** Zulip's field types that need no further configuration. */
const TYPES: readonly { value: number; label: () => string }[] = [
  { value: 1, label: () => t("Text (short)") },
  { value: 2, label: () => t("Text (long)") },
  { value: 4, label: () => t("Date") },
  { value: 5, label: () => t("Link") },
  { value: 6, label: () => t("Users") },
  { value: 8, label: () => t("Pronouns") },
];
const OTHER_TYPES: Readonly<Record<number, () => string>> = {
  3: () => t("List of options"),
  7: () => t("External account"),
};

export function ProfileFieldsSection() {
  const admin = myRole.value.isAdmin;
  const [fields, setFields] = useState<Field[] | undefined>(undefined);
  const [name, setName] = useState("");
  const [hint, setHint] = useState("");
  const [type, setType] = useState(1);
  const [deleting, setDeleting] = useState<Field | undefined>(undefined);
  const [status, run] = useStatus();
  async function load() {
    setFields((await call(api.GET("/realm/profile_fields"))).custom_fields);
  }
  useEffect(() => void load().catch(() => setFields([])), []);
  const typeName = (n: number) =>
    TYPES.find((x) => x.value === n)?.label() ?? OTHER_TYPES[n]?.() ?? String(n);
  return (
    <Section title={t("Custom profile fields")}>
      {admin && (
        <form
          class="org-form"
          aria-label={t("Add a new profile field")}
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              await call(
                api.POST("/realm/profile_fields", { body: { name, hint, field_type: type } }),
              );
              setName("");
              setHint("");
              await load();
            });
          }}
        >
          <h3>{t("Add a new profile field")}</h3>
          <label class="org-field">
            <span>{t("Type")}</span>
            <select value={String(type)} onChange={(e) => setType(Number(e.currentTarget.value))}>
              {TYPES.map((x) => (
                <option key={x.value} value={String(x.value)}>
                  {x.label()}
                </option>
              ))}
            </select>
          </label>
          <label class="org-field">
            <span>{t("Label")}</span>
            <input
              type="text"
              value={name}
              maxLength={40}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </label>
          <label class="org-field">
            <span>{t("Hint (up to 80 characters)")}</span>
            <input
              type="text"
              value={hint}
              maxLength={80}
              onInput={(e) => setHint(e.currentTarget.value)}
            />
          </label>
          <div class="org-actions">
            <button type="submit" class="primary" disabled={!name.trim() && type !== 8}>
              {t("Add")}
            </button>
            <StatusText status={status} />
          </div>
        </form>
      )}
      {fields !== undefined && fields.length === 0 && (
        <p class="org-note">{t("No custom profile fields configured.")}</p>
      )}
      {fields !== undefined && fields.length > 0 && (
        <table class="org-table">
          <thead>
            <tr>
              <th scope="col">{t("Label")}</th>
              <th scope="col">{t("Hint")}</th>
              <th scope="col">{t("Type")}</th>
              {admin && <th scope="col">{t("Actions")}</th>}
            </tr>
          </thead>
          <tbody>
            {fields.map((f) => (
              <tr key={f.id}>
                <td>{f.name}</td>
                <td>{f.hint}</td>
                <td>{typeName(f.type)}</td>
                {admin && (
                  <td>
                    <button
                      type="button"
                      class="danger"
                      aria-label={t("Delete {name}", { name: f.name })}
                      onClick={() => setDeleting(f)}
                    >
                      {t("Delete")}
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {deleting && (
        <Confirm
          title={t("Delete {name}?", { name: deleting.name })}
          action={t("Delete")}
          danger
          onClose={() => setDeleting(undefined)}
          onConfirm={() => {
            const f = deleting;
            void run(async () => {
              await call(
                api.DELETE("/realm/profile_fields/{field_id}", {
                  params: { path: { field_id: f.id } },
                }),
              );
              await load();
            });
          }}
        >
          {t("This will clear the field for every user who has filled it in.")}
        </Confirm>
      )}
    </Section>
  );
}
