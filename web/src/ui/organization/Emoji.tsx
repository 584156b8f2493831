/**
 * Custom emoji (`#organization/emoji-settings`): the organization's emoji (register `realm_emoji`,
 * kept current by its events: state/emoji.ts), "Add a new emoji" (POST /realm/emoji/{name}, the
 * image as multipart) and deactivation (DELETE /realm/emoji/{name}).
 */
import { useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { customEmoji, type Emoji } from "../../state/emoji.ts";
import { myRole } from "../../state/org.ts";
import { Confirm } from "../Dialog.tsx";
import { Section, StatusText, useStatus } from "./common.tsx";

export function EmojiSection() {
  const admin = myRole.value.isAdmin;
  const [name, setName] = useState("");
  const [file, setFile] = useState<File | undefined>(undefined);
  const [formKey, setFormKey] = useState(0);
  const [removing, setRemoving] = useState<Emoji | undefined>(undefined);
  const [status, run] = useStatus();
  const list = [...customEmoji.value].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <Section title={t("Custom emoji")}>
      <form
        key={formKey}
        class="org-form"
        aria-label={t("Add a new emoji")}
        onSubmit={(e) => {
          e.preventDefault();
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
        <h3>{t("Add a new emoji")}</h3>
        <label class="org-field">
          <span>{t("Emoji name")}</span>
          <input type="text" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label class="org-field">
          <span>{t("Emoji image")}</span>
          <input
            type="file"
            aria-label={t("Emoji image")}
            accept="image/png,image/gif,image/jpeg,image/webp"
            onChange={(e) => setFile(e.currentTarget.files?.[0])}
          />
        </label>
        <div class="org-actions">
          <button type="submit" class="primary" disabled={!name.trim() || !file}>
            {t("Add emoji")}
          </button>
          <StatusText status={status} />
        </div>
      </form>
      {list.length === 0 ? (
        <p class="org-note">{t("No custom emoji.")}</p>
      ) : (
        <table class="org-table">
          <thead>
            <tr>
              <th scope="col">{t("Name")}</th>
              <th scope="col">{t("Image")}</th>
              {admin && <th scope="col">{t("Actions")}</th>}
            </tr>
          </thead>
          <tbody>
            {list.map((e) => (
              <tr key={e.code}>
                <td>:{e.name}:</td>
                <td>
                  <img class="org-emoji" src={e.url} alt={`:${e.name}:`} width={24} height={24} />
                </td>
                {admin && (
                  <td>
                    <button
                      type="button"
                      class="danger"
                      aria-label={t("Deactivate {name}", { name: `:${e.name}:` })}
                      onClick={() => setRemoving(e)}
                    >
                      {t("Deactivate")}
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {removing && (
        <Confirm
          title={t("Deactivate custom emoji?")}
          action={t("Deactivate")}
          danger
          onClose={() => setRemoving(undefined)}
          onConfirm={() => {
            const e = removing;
            void run(() =>
              call(
                api.DELETE("/realm/emoji/{emoji_name}", {
                  params: { path: { emoji_name: e.name } },
                }),
              ),
            );
          }}
        >
          {t("Deactivating :{name}: removes it from the emoji picker; past reactions keep it.", {
            name: removing.name,
          })}
        </Confirm>
      )}
    </Section>
  );
}
