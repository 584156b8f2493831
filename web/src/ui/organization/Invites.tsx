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
import { Confirm } from "../Dialog.tsx";
import { ROLES, type Role, Section, StatusText, useStatus } from "./common.tsx";

type Invite = components["schemas"]["Invite"];

export function InvitesSection() {
  const [invites, setInvites] = useState<Invite[] | undefined>(undefined);
  const [emails, setEmails] = useState("");
  const [role, setRole] = useState<Role>(400);
  const [channels, setChannels] = useState<ReadonlySet<number>>(new Set());
  const [link, setLink] = useState<string | undefined>(undefined);
  const [revoking, setRevoking] = useState<Invite | undefined>(undefined);
  const [status, run] = useStatus();
  const [listStatus, runList] = useStatus();

  async function load() {
    setInvites((await call(api.GET("/invites"))).invites);
  }
  useEffect(() => void load().catch(() => setInvites([])), []);

  const subs = [...subscriptions.value.values()].sort((a, b) => a.name.localeCompare(b.name));
  const expiry = (i: Invite) =>
    i.expiry_date ? new Date(i.expiry_date * 1000).toLocaleString() : t("Never expires");

  return (
    <Section title={t("Invitations")}>
      <form
        class="org-form"
        aria-label={t("Invite users to organization")}
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            await call(
              api.POST("/invites", {
                body: { invitee_emails: emails, invite_as: role, stream_ids: [...channels] },
              }),
            );
            setEmails("");
            await load();
          });
        }}
      >
        <h3>{t("Invite users to organization")}</h3>
        <label class="org-field">
          <span>{t("Emails (one on each line or separated by commas)")}</span>
          <textarea rows={3} value={emails} onInput={(e) => setEmails(e.currentTarget.value)} />
        </label>
        <label class="org-field">
          <span>{t("Users join as")}</span>
          <select
            value={String(role)}
            onChange={(e) => setRole(Number(e.currentTarget.value) as Role)}
          >
            {ROLES.map((r) => (
              <option key={r.value} value={String(r.value)}>
                {r.label()}
              </option>
            ))}
          </select>
        </label>
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
        <div class="org-actions">
          <button type="submit" class="primary" disabled={!emails.trim()}>
            {t("Invite")}
          </button>
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
          <StatusText status={status} />
        </div>
        {link && (
          <label class="org-field">
            <span>{t("Invitation link")}</span>
            <input type="text" readOnly value={link} onFocus={(e) => e.currentTarget.select()} />
          </label>
        )}
      </form>
      <h3>{t("Outstanding invitations")}</h3>
      <StatusText status={listStatus} />
      {invites === undefined ? (
        <p class="org-note">{t("Loading…")}</p>
      ) : invites.length === 0 ? (
        <p class="org-note">{t("There are no outstanding invitations.")}</p>
      ) : (
        <table class="org-table">
          <thead>
            <tr>
              <th scope="col">{t("Email")}</th>
              <th scope="col">{t("Invited by")}</th>
              <th scope="col">{t("Role")}</th>
              <th scope="col">{t("Expires at")}</th>
              <th scope="col">{t("Actions")}</th>
            </tr>
          </thead>
          <tbody>
            {invites.map((i) => {
              const who = i.is_multiuse ? t("Invitation link") : (i.email ?? "");
              return (
                <tr key={`${i.is_multiuse}-${i.id}`}>
                  <td>
                    {who}
                    {i.is_multiuse && <code class="org-link">{i.link_url}</code>}
                  </td>
                  <td>{users.value.get(i.invited_by_user_id)?.full_name ?? ""}</td>
                  <td>{ROLES.find((r) => r.value === i.invited_as)?.label() ?? ""}</td>
                  <td>{expiry(i)}</td>
                  <td>
                    <button
                      type="button"
                      class="danger"
                      aria-label={t("Revoke invitation to {email}", { email: who })}
                      onClick={() => setRevoking(i)}
                    >
                      {t("Revoke")}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {revoking && (
        <Confirm
          title={t("Revoke invitation?")}
          action={t("Revoke")}
          danger
          onClose={() => setRevoking(undefined)}
          onConfirm={() => {
            const i = revoking;
            void runList(async () => {
              const params = { path: { invite_id: i.id } };
              await call(
                i.is_multiuse
                  ? api.DELETE("/invites/multiuse/{invite_id}", { params })
                  : api.DELETE("/invites/{invite_id}", { params }),
              );
              await load();
            });
          }}
        >
          {revoking.is_multiuse
            ? t("Are you sure you want to revoke this invitation link?")
            : t("Are you sure you want to revoke the invitation to {email}?", {
                email: revoking.email ?? "",
              })}
        </Confirm>
      )}
    </Section>
  );
}
