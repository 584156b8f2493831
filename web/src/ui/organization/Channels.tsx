/**
 * Channels (`#organization/channels`): every channel of the organization (GET /streams with
 * include_all, administrators only), each editable (name, description, privacy: PATCH
 * /streams/{id}) and archivable (DELETE /streams/{id}) after a confirmation.
 */
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { registrations } from "../../state/events.ts";
import type { components } from "../../../../client/src/index.ts";
import { Confirm, Dialog } from "../Dialog.tsx";
import { Section, StatusText, useStatus } from "./common.tsx";

type Channel = components["schemas"]["Channel"];
const PAGE = 50;

function EditChannel({ c, onClose }: { c: Channel; onClose: (changed: boolean) => void }) {
  const [name, setName] = useState(c.name);
  const [description, setDescription] = useState(c.description);
  const [isPrivate, setPrivate] = useState(c.invite_only);
  const [status, run] = useStatus();
  return (
    <Dialog title={t("Edit #{channel}", { channel: c.name })} onClose={() => onClose(false)}>
      <form
        class="org-form"
        onSubmit={(e) => {
          e.preventDefault();
          const body: { new_name?: string; description?: string; is_private?: boolean } = {};
          if (name !== c.name) body.new_name = name;
          if (description !== c.description) body.description = description;
          if (isPrivate !== c.invite_only) body.is_private = isPrivate;
          void run(() =>
            call(
              api.PATCH("/streams/{stream_id}", {
                params: { path: { stream_id: c.stream_id } },
                body,
              }),
            ),
          ).then((ok) => ok && onClose(true));
        }}
      >
        <label class="org-field">
          <span>{t("Channel name")}</span>
          <input type="text" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label class="org-field">
          <span>{t("Description")}</span>
          <textarea
            rows={3}
            value={description}
            onInput={(e) => setDescription(e.currentTarget.value)}
          />
        </label>
        <label class="org-field">
          <span>{t("Who can access the channel?")}</span>
          <select
            value={isPrivate ? "private" : "public"}
            onChange={(e) => setPrivate(e.currentTarget.value === "private")}
          >
            <option value="public">{t("Public")}</option>
            <option value="private">{t("Private")}</option>
          </select>
        </label>
        <div class="dialog-buttons">
          <StatusText status={status} />
          <button type="button" onClick={() => onClose(false)}>
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

export function ChannelsSection() {
  const [all, setAll] = useState<Channel[] | undefined>(undefined);
  const [filter, setFilter] = useState("");
  const [start, setStart] = useState(0);
  const [editing, setEditing] = useState<Channel | undefined>(undefined);
  const [archiving, setArchiving] = useState<Channel | undefined>(undefined);
  const [status, run] = useStatus();
  async function load() {
    setAll((await call(api.GET("/streams", { params: { query: { include_all: true } } }))).streams);
  }
  useEffect(() => void load().catch(() => setAll([])), [registrations.value]);
  useEffect(() => setStart(0), [filter]);
  const shown = useMemo(() => {
    const q = filter.trim().toLowerCase();
    return (all ?? []).filter((c) => !q || c.name.toLowerCase().includes(q));
  }, [all, filter]);
  const page = shown.slice(start, start + PAGE);
  return (
    <Section title={t("Channels")}>
      <input
        type="search"
        class="org-filter"
        aria-label={t("Filter channels")}
        placeholder={t("Filter channels")}
        value={filter}
        onInput={(e) => setFilter(e.currentTarget.value)}
      />
      <StatusText status={status} />
      {all !== undefined && (
        <table class="org-table">
          <thead>
            <tr>
              <th scope="col">{t("Name")}</th>
              <th scope="col">{t("Description")}</th>
              <th scope="col">{t("Privacy")}</th>
              <th scope="col">{t("Actions")}</th>
            </tr>
          </thead>
          <tbody>
            {page.map((c) => (
              <tr key={c.stream_id}>
                <td>#{c.name}</td>
                <td>{c.description}</td>
                <td>{c.invite_only ? t("Private") : t("Public")}</td>
                <td class="org-row-actions">
                  <button
                    type="button"
                    aria-label={t("Edit #{channel}", { channel: c.name })}
                    onClick={() => setEditing(c)}
                  >
                    {t("Edit")}
                  </button>
                  <button
                    type="button"
                    class="danger"
                    aria-label={t("Archive #{channel}", { channel: c.name })}
                    onClick={() => setArchiving(c)}
                  >
                    {t("Archive")}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {shown.length > PAGE && (
        <div class="org-pager">
          <span>
            {t("{from}–{to} of {total}", {
              from: start + 1,
              to: start + page.length,
              total: shown.length,
            })}
          </span>
          <button type="button" disabled={start === 0} onClick={() => setStart(start - PAGE)}>
            {t("Previous")}
          </button>
          <button
            type="button"
            disabled={start + PAGE >= shown.length}
            onClick={() => setStart(start + PAGE)}
          >
            {t("Next")}
          </button>
        </div>
      )}
      {editing && (
        <EditChannel
          c={editing}
          onClose={(changed) => {
            setEditing(undefined);
            if (changed) void load();
          }}
        />
      )}
      {archiving && (
        <Confirm
          title={t("Archive #{channel}?", { channel: archiving.name })}
          action={t("Archive")}
          danger
          onClose={() => setArchiving(undefined)}
          onConfirm={() => {
            const c = archiving;
            void run(async () => {
              await call(
                api.DELETE("/streams/{stream_id}", {
                  params: { path: { stream_id: c.stream_id } },
                }),
              );
              await load();
            });
          }}
        >
          {t("Archiving this channel will remove it from everyone's sidebar; its messages stay.")}
        </Confirm>
      )}
    </Section>
  );
}
