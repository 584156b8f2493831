/**
 * The user card (Zulip's user popover), opened from a sender's name or avatar in the feed and from
 * the buddy list: the avatar, name, status, email where visible, role, local time, last activity
 * and custom profile fields, with "Send direct message", "View messages sent", "View full
 * profile", "Mute user" / "Unmute user" and "Copy email". A dialog named by the user's name.
 */
import { signal } from "@preact/signals";
import { useState } from "preact/hooks";
import { t } from "../i18n.ts";
import { openCompose } from "../state/compose.ts";
import { me, users } from "../state/model.ts";
import { isMuted, muteUser, mutedUsers } from "../state/muted-users.ts";
import { go, goPage } from "../state/view.ts";
import { Avatar } from "./Avatar.tsx";
import { Dialog } from "./Dialog.tsx";
import { lastActive, localTime, ProfileFields, roleName, UserStatusLine } from "./people.tsx";
import "./UserCard.css";

export const cardUser = signal<number | undefined>(undefined);

export function openUserCard(userId: number) {
  cardUser.value = userId;
}

/** A sender's name in the feed: a button that opens their card. */
export function SenderName({ userId, name }: { userId: number; name: string }) {
  return (
    <button
      type="button"
      class="sender sender-button"
      onClick={(e) => {
        e.stopPropagation();
        openUserCard(userId);
      }}
    >
      {name}
    </button>
  );
}

/** The email others may see: the real one when visible, else none (the dummy is not an address). */
export function visibleEmail(u: {
  delivery_email: string | null;
  email: string;
}): string | undefined {
  return u.delivery_email ?? undefined;
}

export function UserCardHost() {
  const id = cardUser.value;
  if (id === undefined) return null;
  return <UserCard key={id} userId={id} onClose={() => (cardUser.value = undefined)} />;
}

function UserCard({ userId, onClose }: { userId: number; onClose: () => void }) {
  const u = users.value.get(userId);
  const [copied, setCopied] = useState(false);
  void mutedUsers.value;
  if (!u) return null;
  const mine = userId === me.value.id;
  const email = visibleEmail(u);
  const time = localTime(u);
  const done = (f: () => void) => () => {
    onClose();
    f();
  };
  return (
    <Dialog title={u.full_name} onClose={onClose}>
      <div class="user-card">
        <div class="user-card-head">
          <Avatar userId={u.user_id} name={u.full_name} url={u.avatar_url ?? undefined} size={72} />
          <div>
            <UserStatusLine userId={u.user_id} />
            <dl class="user-facts">
              {email && (
                <div>
                  <dt>{t("Email")}</dt>
                  <dd>{email}</dd>
                </div>
              )}
              <div>
                <dt>{t("Role")}</dt>
                <dd>{roleName(u)}</dd>
              </div>
              {time && (
                <div>
                  <dt>{t("Local time")}</dt>
                  <dd>{time}</dd>
                </div>
              )}
              <div>
                <dt>{t("Last active")}</dt>
                <dd>{mine ? t("Active now") : lastActive(u.user_id)}</dd>
              </div>
              <ProfileFields u={u} />
            </dl>
          </div>
        </div>
        <div class="user-card-actions">
          <button
            type="button"
            class="primary"
            onClick={done(() => {
              go({ kind: "dm", userIds: [u.user_id] });
              openCompose({ kind: "dm", userIds: [u.user_id] });
            })}
          >
            {t("Send direct message")}
          </button>
          <button type="button" onClick={done(() => go({ kind: "sender", userId: u.user_id }))}>
            {t("View messages sent")}
          </button>
          <button type="button" onClick={done(() => goPage("user", String(u.user_id)))}>
            {t("View full profile")}
          </button>
          {email && (
            <button
              type="button"
              onClick={() =>
                void navigator.clipboard?.writeText(email).then(
                  () => setCopied(true),
                  () => {},
                )
              }
            >
              {copied ? t("Copied!") : t("Copy email")}
            </button>
          )}
          {!mine && !u.is_bot && (
            <button
              type="button"
              onClick={() => void muteUser(u.user_id, !isMuted(u.user_id)).catch(() => {})}
            >
              {isMuted(u.user_id) ? t("Unmute user") : t("Mute user")}
            </button>
          )}
        </div>
      </div>
    </Dialog>
  );
}
