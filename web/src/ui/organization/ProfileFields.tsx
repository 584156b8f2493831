/**
 * Custom profile fields (`#organization/profile-field-settings`): the organization's fields (GET
 * /realm/profile_fields), added (POST: name, hint, type) and deleted (DELETE).
 */
import { useEffect, useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { myRole } from "../../state/org.ts";
import { Field as TextField, Select } from "../Form.tsx";
import { AdminTable } from "./AdminTable.tsx";
import { AddForm, Section, useStatus } from "./common.tsx";

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
        <AddForm
          title={t("Add a new profile field")}
          submit={t("Add")}
          disabled={!name.trim() && type !== 8}
          status={status}
          onSubmit={() =>
            void run(async () => {
              await call(
                api.POST("/realm/profile_fields", { body: { name, hint, field_type: type } }),
              );
              setName("");
              setHint("");
              await load();
            })
          }
        >
          <Select
            label={t("Type")}
            value={String(type)}
            options={TYPES.map((x) => ({ value: String(x.value), label: x.label() }))}
            onChange={(v) => setType(Number(v))}
          />
          <TextField label={t("Label")} value={name} maxLength={40} onInput={setName} />
          <TextField
            label={t("Hint (up to 80 characters)")}
            value={hint}
            maxLength={80}
            onInput={setHint}
          />
        </AddForm>
      )}
      <AdminTable
        rows={fields}
        rowKey={(f) => f.id}
        empty={t("No custom profile fields configured.")}
        columns={[
          { header: t("Label"), cell: (f) => f.name },
          { header: t("Hint"), cell: (f) => f.hint },
          { header: t("Type"), cell: (f) => typeName(f.type) },
        ]}
        actions={
          admin
            ? (f) => [
                {
                  label: t("Delete"),
                  name: t("Delete {name}", { name: f.name }),
                  danger: true,
                  confirm: {
                    title: t("Delete {name}?", { name: f.name }),
                    body: t("This will clear the field for every user who has filled it in."),
                    onConfirm: () =>
                      void run(async () => {
                        await call(
                          api.DELETE("/realm/profile_fields/{field_id}", {
                            params: { path: { field_id: f.id } },
                          }),
                        );
                        await load();
                      }),
                  },
                },
              ]
            : undefined
        }
      />
    </Section>
  );
}
