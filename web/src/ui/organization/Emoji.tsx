/**
 * Custom emoji (`#organization/emoji-settings`): the organization's emoji (register `realm_emoji`,
 * kept current by its events: state/emoji.ts), "Add a new emoji" (POST /realm/emoji/{name}, the
 * image as multipart) and deactivation (DELETE /realm/emoji/{name}).
 */
import { useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { customEmoji } from "../../state/emoji.ts";
import { myRole } from "../../state/org.ts";
import { Field } from "../Form.tsx";
import { AdminTable } from "./AdminTable.tsx";
import { AddForm, Section, useStatus } from "./common.tsx";

export function EmojiSection() {
  const admin = myRole.value.isAdmin;
  const [name, setName] = useState("");
  const [file, setFile] = useState<File | undefined>(undefined);
  const [formKey, setFormKey] = useState(0);
  const [status, run] = useStatus();
  const list = [...customEmoji.value].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <Section title={t("Custom emoji")}>
      <AddForm
        key={formKey}
        title={t("Add a new emoji")}
        submit={t("Add emoji")}
        disabled={!name.trim() || !file}
        status={status}
        onSubmit={() => {
          if (!file) return;
          const form = new FormData();
          form.append("file", file, file.name);
          void run(async () => {
            await call(
              api.POST("/realm/emoji/{emoji_name}", {
                params: { path: { emoji_name: name.trim() } },
                // The image as multipart: the browser sets the type with its boundary.
                headers: { "Content-Type": null },
                body: {},
                bodySerializer: () => form,
              }),
            );
            setName("");
            setFile(undefined);
            setFormKey((k) => k + 1);
          });
        }}
      >
        <Field label={t("Emoji name")} value={name} onInput={setName} />
        <label class="org-field">
          <span>{t("Emoji image")}</span>
          <input
            type="file"
            aria-label={t("Emoji image")}
            accept="image/png,image/gif,image/jpeg,image/webp"
            onChange={(e) => setFile(e.currentTarget.files?.[0])}
          />
        </label>
      </AddForm>
      <AdminTable
        rows={list}
        rowKey={(e) => e.code}
        empty={t("No custom emoji.")}
        columns={[
          { header: t("Name"), cell: (e) => `:${e.name}:` },
          {
            header: t("Image"),
            cell: (e) => (
              <img class="org-emoji" src={e.url} alt={`:${e.name}:`} width={24} height={24} />
            ),
          },
        ]}
        actions={
          admin
            ? (e) => [
                {
                  label: t("Deactivate"),
                  name: t("Deactivate {name}", { name: `:${e.name}:` }),
                  danger: true,
                  confirm: {
                    title: t("Deactivate custom emoji?"),
                    body: t(
                      "Deactivating :{name}: removes it from the emoji picker; past reactions keep it.",
                      { name: e.name },
                    ),
                    onConfirm: () =>
                      void run(() =>
                        call(
                          api.DELETE("/realm/emoji/{emoji_name}", {
                            params: { path: { emoji_name: e.name } },
                          }),
                        ),
                      ),
                  },
                },
              ]
            : undefined
        }
      />
    </Section>
  );
}
