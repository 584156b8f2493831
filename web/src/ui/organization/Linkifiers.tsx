/**
 * Linkifiers (`#organization/linkifier-settings`): the patterns that turn text into links (GET
 * /realm/linkifiers, kept current by `realm_linkifiers` events while shown), added (POST
 * /realm/filters), edited (PATCH /realm/filters/{id}) and deleted, the server's validation
 * errors ("Invalid linkifier pattern...") shown as it words them.
 */
import { useEffect, useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { myRole } from "../../state/org.ts";
import { Dialog } from "../Dialog.tsx";
import { Section, StatusText, useStatus } from "./common.tsx";

interface Linkifier {
  id: number;
  pattern: string;
  url_template: string;
}

function LinkifierFields({
  value,
  onChange,
}: {
  value: { pattern: string; url_template: string };
  onChange: (v: { pattern: string; url_template: string }) => void;
}) {
  return (
    <>
      <label class="org-field">
        <span>{t("Pattern")}</span>
        <input
          type="text"
          value={value.pattern}
          placeholder="#(?P<id>[0-9]+)"
          onInput={(e) => onChange({ ...value, pattern: e.currentTarget.value })}
        />
      </label>
      <label class="org-field">
        <span>{t("URL template")}</span>
        <input
          type="text"
          value={value.url_template}
          placeholder="https://github.com/zulip/zulip/issues/{id}"
          onInput={(e) => onChange({ ...value, url_template: e.currentTarget.value })}
        />
      </label>
    </>
  );
}

function EditLinkifier({ l, onClose }: { l: Linkifier; onClose: () => void }) {
  const [value, setValue] = useState({ pattern: l.pattern, url_template: l.url_template });
  const [status, run] = useStatus();
  return (
    <Dialog title={t("Edit linkifier")} onClose={onClose}>
      <form
        class="org-form"
        onSubmit={(e) => {
          e.preventDefault();
          void run(() =>
            call(
              api.PATCH("/realm/filters/{filter_id}", {
                params: { path: { filter_id: l.id } },
                body: value,
              }),
            ),
          ).then((ok) => ok && onClose());
        }}
      >
        <LinkifierFields value={value} onChange={setValue} />
        <div class="dialog-buttons">
          <StatusText status={status} />
          <button type="button" onClick={onClose}>
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

export function LinkifiersSection() {
  const admin = myRole.value.isAdmin;
  const [list, setList] = useState<Linkifier[] | undefined>(undefined);
  const [value, setValue] = useState({ pattern: "", url_template: "" });
  const [editing, setEditing] = useState<Linkifier | undefined>(undefined);
  const [status, run] = useStatus();
  async function load() {
    setList((await call(api.GET("/realm/linkifiers"))).linkifiers);
  }
  useEffect(() => void load().catch(() => setList([])), []);
  return (
    <Section title={t("Linkifiers")}>
      <p class="org-note">
        {t(
          "Configure regular expression patterns that will be used to automatically transform any matching text in Zulip messages and topics into links.",
        )}
      </p>
      {admin && (
        <form
          class="org-form"
          aria-label={t("Add a new linkifier")}
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              await call(api.POST("/realm/filters", { body: value }));
              setValue({ pattern: "", url_template: "" });
              await load();
            });
          }}
        >
          <h3>{t("Add a new linkifier")}</h3>
          <LinkifierFields value={value} onChange={setValue} />
          <div class="org-actions">
            <button type="submit" class="primary" disabled={!value.pattern || !value.url_template}>
              {t("Add linkifier")}
            </button>
            <StatusText status={status} />
          </div>
        </form>
      )}
      {list !== undefined && list.length === 0 && (
        <p class="org-note">{t("No linkifiers configured.")}</p>
      )}
      {list !== undefined && list.length > 0 && (
        <table class="org-table">
          <thead>
            <tr>
              <th scope="col">{t("Pattern")}</th>
              <th scope="col">{t("URL template")}</th>
              {admin && <th scope="col">{t("Actions")}</th>}
            </tr>
          </thead>
          <tbody>
            {list.map((l) => (
              <tr key={l.id}>
                <td>
                  <code>{l.pattern}</code>
                </td>
                <td>
                  <code>{l.url_template}</code>
                </td>
                {admin && (
                  <td class="org-row-actions">
                    <button
                      type="button"
                      aria-label={t("Edit {pattern}", { pattern: l.pattern })}
                      onClick={() => setEditing(l)}
                    >
                      {t("Edit")}
                    </button>
                    <button
                      type="button"
                      class="danger"
                      aria-label={t("Delete {pattern}", { pattern: l.pattern })}
                      onClick={() =>
                        void run(async () => {
                          await call(
                            api.DELETE("/realm/filters/{filter_id}", {
                              params: { path: { filter_id: l.id } },
                            }),
                          );
                          await load();
                        })
                      }
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
      {editing && (
        <EditLinkifier
          l={editing}
          onClose={() => {
            setEditing(undefined);
            void load();
          }}
        />
      )}
    </Section>
  );
}
