/**
 * Channels (`#organization/channels`): every channel of the organization (GET /streams with
 * include_all, administrators only), each editable (name, description, privacy: PATCH
 * /streams/{id}) and archivable (DELETE /streams/{id}) after a confirmation.
 */
import { useEffect, useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { registrations } from "../../state/events.ts";
import type { components } from "../../../../client/src/index.ts";
import { Field, FormDialog, Select } from "../Form.tsx";
import { AdminTable } from "./AdminTable.tsx";
import { Section, StatusText, useStatus } from "./common.tsx";

type Channel = components["schemas"]["Channel"];

function EditChannel({ c, onClose }: { c: Channel; onClose: (changed: boolean) => void }) {
  const [name, setName] = useState(c.name);
  const [description, setDescription] = useState(c.description);
  const [isPrivate, setPrivate] = useState(c.invite_only);
  const body: { new_name?: string; description?: string; is_private?: boolean } = {};
  if (name !== c.name) body.new_name = name;
  if (description !== c.description) body.description = description;
  if (isPrivate !== c.invite_only) body.is_private = isPrivate;
  return (
    <FormDialog
      title={t("Edit #{channel}", { channel: c.name })}
      onClose={onClose}
      save={() =>
        call(
          api.PATCH("/streams/{stream_id}", { params: { path: { stream_id: c.stream_id } }, body }),
        )
      }
    >
      <Field label={t("Channel name")} value={name} onInput={setName} />
      <Field label={t("Description")} rows={3} value={description} onInput={setDescription} />
      <Select
        label={t("Who can access the channel?")}
        value={isPrivate ? "private" : "public"}
        options={[
          { value: "public", label: t("Public") },
          { value: "private", label: t("Private") },
        ]}
        onChange={(v) => setPrivate(v === "private")}
      />
    </FormDialog>
  );
}

export function ChannelsSection() {
  const [all, setAll] = useState<Channel[] | undefined>(undefined);
  const [editing, setEditing] = useState<Channel | undefined>(undefined);
  const [status, run] = useStatus();
  async function load() {
    setAll((await call(api.GET("/streams", { params: { query: { include_all: true } } }))).streams);
  }
  useEffect(() => void load().catch(() => setAll([])), [registrations.value]);
  return (
    <Section title={t("Channels")}>
      <AdminTable
        rows={all}
        rowKey={(c) => c.stream_id}
        filter={{ label: t("Filter channels"), match: (c, q) => c.name.toLowerCase().includes(q) }}
        before={<StatusText status={status} />}
        columns={[
          { header: t("Name"), cell: (c) => `#${c.name}` },
          { header: t("Description"), cell: (c) => c.description },
          { header: t("Privacy"), cell: (c) => (c.invite_only ? t("Private") : t("Public")) },
        ]}
        actions={(c) => [
          {
            label: t("Edit"),
            name: t("Edit #{channel}", { channel: c.name }),
            onClick: () => setEditing(c),
          },
          {
            label: t("Archive"),
            name: t("Archive #{channel}", { channel: c.name }),
            danger: true,
            confirm: {
              title: t("Archive #{channel}?", { channel: c.name }),
              body: t(
                "Archiving this channel will remove it from everyone's sidebar; its messages stay.",
              ),
              onConfirm: () =>
                void run(async () => {
                  await call(
                    api.DELETE("/streams/{stream_id}", {
                      params: { path: { stream_id: c.stream_id } },
                    }),
                  );
                  await load();
                }),
            },
          },
        ]}
      />
      {editing && (
        <EditChannel
          c={editing}
          onClose={(changed) => {
            setEditing(undefined);
            if (changed) void load();
          }}
        />
      )}
    </Section>
  );
}
