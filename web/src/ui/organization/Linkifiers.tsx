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
import { Field, FormDialog } from "../Form.tsx";
import { AdminTable } from "./AdminTable.tsx";
import { AddForm, Section, useStatus } from "./common.tsx";

interface Linkifier {
  id: number;
  pattern: string;
  url_template: string;
}
type Value = Omit<Linkifier, "id">;

function LinkifierFields({ value, onChange }: { value: Value; onChange: (v: Value) => void }) {
  return (
    <>
      <Field
        label={t("Pattern")}
        value={value.pattern}
        placeholder="#(?P<id>[0-9]+)"
        onInput={(pattern) => onChange({ ...value, pattern })}
      />
      <Field
        label={t("URL template")}
        value={value.url_template}
        placeholder="https://github.com/zulip/zulip/issues/{id}"
        onInput={(url_template) => onChange({ ...value, url_template })}
      />
    </>
  );
}

function EditLinkifier({ l, onClose }: { l: Linkifier; onClose: () => void }) {
  const [value, setValue] = useState<Value>({ pattern: l.pattern, url_template: l.url_template });
  return (
    <FormDialog
      title={t("Edit linkifier")}
      onClose={onClose}
      save={() =>
        call(
          api.PATCH("/realm/filters/{filter_id}", {
            params: { path: { filter_id: l.id } },
            body: value,
          }),
        )
      }
    >
      <LinkifierFields value={value} onChange={setValue} />
    </FormDialog>
  );
}

export function LinkifiersSection() {
  const admin = myRole.value.isAdmin;
  const [list, setList] = useState<Linkifier[] | undefined>(undefined);
  const [value, setValue] = useState<Value>({ pattern: "", url_template: "" });
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
        <AddForm
          title={t("Add a new linkifier")}
          submit={t("Add linkifier")}
          disabled={!value.pattern || !value.url_template}
          status={status}
          onSubmit={() =>
            void run(async () => {
              await call(api.POST("/realm/filters", { body: value }));
              setValue({ pattern: "", url_template: "" });
              await load();
            })
          }
        >
          <LinkifierFields value={value} onChange={setValue} />
        </AddForm>
      )}
      <AdminTable
        rows={list}
        rowKey={(l) => l.id}
        empty={t("No linkifiers configured.")}
        columns={[
          { header: t("Pattern"), cell: (l) => <code>{l.pattern}</code> },
          { header: t("URL template"), cell: (l) => <code>{l.url_template}</code> },
        ]}
        actions={
          admin
            ? (l) => [
                {
                  label: t("Edit"),
                  name: t("Edit {pattern}", { pattern: l.pattern }),
                  onClick: () => setEditing(l),
                },
                {
                  label: t("Delete"),
                  name: t("Delete {pattern}", { pattern: l.pattern }),
                  danger: true,
                  onClick: () =>
                    void run(async () => {
                      await call(
                        api.DELETE("/realm/filters/{filter_id}", {
                          params: { path: { filter_id: l.id } },
                        }),
                      );
                      await load();
                    }),
                },
              ]
            : undefined
        }
      />
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
