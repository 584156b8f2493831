/**
 * The user card (Zulip's user popover), opened from a sender's name or avatar in the feed and from
 * the buddy list: the avatar, name, status, email where visible, role, local time, last activity
 * and custom profile fields, with "Send direct message", "View messages sent", "View full
 * profile", "Mute user" / "Unmute user" and "Copy email". A dialog named by the user's name.
 */
import { signal } from "@preact/signals";
import { useState } from "preact/hooks";
import { t } from "../i18n.ts";
import { users } from "../state/model.ts";
import { mutedUsers } from "../state/muted-users.ts";
import { goPage } from "../state/view.ts";
import { Avatar } from "./Avatar.tsx";
import { Dialog } from "./Dialog.tsx";
import { UserStatusLine } from "./people.tsx";
import { UserActions, UserFacts, visibleEmail } from "./UserFacts.tsx";
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
  const email = visibleEmail(u);
  return (
    <Dialog title={u.full_name} onClose={onClose}>
      <div class="user-card">
        <div class="user-card-head">
          <Avatar userId={u.user_id} name={u.full_name} url={u.avatar_url ?? undefined} size={72} />
          <div>
            <UserStatusLine userId={u.user_id} />
            <UserFacts u={u} />
          </div>
        </div>
        <UserActions u={u} then={onClose}>
          <button
            type="button"
            onClick={() => {
              onClose();
              goPage("user", String(u.user_id));
            }}
          >
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
        </UserActions>
      </div>
    </Dialog>
  );
}
