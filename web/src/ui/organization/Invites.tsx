/**
 * Invitations (`#organization/invites`): "Invite users to organization" (POST /invites: emails,
 * the role they join as, the channels they join), reusable invitation links (POST
 * /invites/multiuse), and the invitations not yet used (GET /invites), each revocable.
 */
import { useEffect, useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { subscriptions, users } from "../../state/model.ts";
import type { components } from "../../../../client/src/index.ts";
import { Field, Select } from "../Form.tsx";
import { AdminTable } from "./AdminTable.tsx";
import { AddForm, ROLES, type Role, Section, StatusText, useStatus } from "./common.tsx";

type Invite = components["schemas"]["Invite"];

export function InvitesSection() {
  const [invites, setInvites] = useState<Invite[] | undefined>(undefined);
  const [emails, setEmails] = useState("");
  const [role, setRole] = useState<Role>(400);
  const [channels, setChannels] = useState<ReadonlySet<number>>(new Set());
  const [link, setLink] = useState<string | undefined>(undefined);
  const [status, run] = useStatus();
  const [listStatus, runList] = useStatus();

  async function load() {
    setInvites((await call(api.GET("/invites"))).invites);
  }
  useEffect(() => void load().catch(() => setInvites([])), []);

  const subs = [...subscriptions.value.values()].sort((a, b) => a.name.localeCompare(b.name));
  const expiry = (i: Invite) =>
    i.expiry_date ? new Date(i.expiry_date * 1000).toLocaleString() : t("Never expires");
  const who = (i: Invite) => (i.is_multiuse ? t("Invitation link") : (i.email ?? ""));

  return (
    <Section title={t("Invitations")}>
      <AddForm
        title={t("Invite users to organization")}
        submit={t("Invite")}
        disabled={!emails.trim()}
        status={status}
        onSubmit={() =>
          void run(async () => {
            await call(
              api.POST("/invites", {
                body: { invitee_emails: emails, invite_as: role, stream_ids: [...channels] },
              }),
            );
            setEmails("");
            await load();
          })
        }
        buttons={
          <button
            type="button"
            onClick={() =>
              void run(async () => {
                const r = await call(
                  api.POST("/invites/multiuse", {
                    body: { invite_as: role, stream_ids: [...channels] },
                  }),
                );
                setLink(r.invite_link);
                await load();
              })
            }
          >
            {t("Generate invite link")}
          </button>
        }
        after={link && <Field label={t("Invitation link")} value={link} readOnly />}
      >
        <Field
          label={t("Emails (one on each line or separated by commas)")}
          rows={3}
          value={emails}
          onInput={setEmails}
        />
        <Select
          label={t("Users join as")}
          value={String(role)}
          options={ROLES.map((r) => ({ value: String(r.value), label: r.label() }))}
          onChange={(v) => setRole(Number(v) as Role)}
        />
        <fieldset>
          <legend>{t("Channels they should join")}</legend>
          <div class="org-checks">
            {subs.map((s) => (
              <label key={s.stream_id} class="org-check">
                <input
                  type="checkbox"
                  checked={channels.has(s.stream_id)}
                  onChange={(e) => {
                    const next = new Set(channels);
                    if (e.currentTarget.checked) next.add(s.stream_id);
                    else next.delete(s.stream_id);
                    setChannels(next);
                  }}
                />
                #{s.name}
              </label>
            ))}
          </div>
        </fieldset>
      </AddForm>
      <h3>{t("Outstanding invitations")}</h3>
      <AdminTable
        rows={invites}
        rowKey={(i) => `${i.is_multiuse}-${i.id}`}
        loading={t("Loading…")}
        empty={t("There are no outstanding invitations.")}
        before={<StatusText status={listStatus} />}
        columns={[
          {
            header: t("Email"),
            cell: (i) => (
              <>
                {who(i)}
                {i.is_multiuse && <code class="org-link">{i.link_url}</code>}
              </>
            ),
          },
          {
            header: t("Invited by"),
            cell: (i) => users.value.get(i.invited_by_user_id)?.full_name ?? "",
          },
          { header: t("Role"), cell: (i) => ROLES.find((r) => r.value === i.invited_as)?.label() },
          { header: t("Expires at"), cell: expiry },
        ]}
        actions={(i) => [
          {
            label: t("Revoke"),
            name: t("Revoke invitation to {email}", { email: who(i) }),
            danger: true,
            confirm: {
              title: t("Revoke invitation?"),
              body: i.is_multiuse
                ? t("Are you sure you want to revoke this invitation link?")
                : t("Are you sure you want to revoke the invitation to {email}?", {
                    email: i.email ?? "",
                  }),
              onConfirm: () =>
                void runList(async () => {
                  const params = { path: { invite_id: i.id } };
                  await call(
                    i.is_multiuse
                      ? api.DELETE("/invites/multiuse/{invite_id}", { params })
                      : api.DELETE("/invites/{invite_id}", { params }),
                  );
                  await load();
                }),
            },
          },
        ]}
      />
    </Section>
  );
}
