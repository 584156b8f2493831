/**
 * A user's full profile (`#user/<id>`, Zulip's "View full profile"): avatar, name, status, email
 * where visible, role, when they joined, local time, last activity and every custom profile
 * field, with the card's actions.
 */
import { t } from "../i18n.ts";
import { openCompose } from "../state/compose.ts";
import { me, users } from "../state/model.ts";
import { isMuted, muteUser, mutedUsers } from "../state/muted-users.ts";
import { go } from "../state/view.ts";
import { Avatar } from "./Avatar.tsx";
import type { PageProps } from "./PageHost.tsx";
import { lastActive, localTime, ProfileFields, roleName, UserStatusLine } from "./people.tsx";
import { visibleEmail } from "./UserCard.tsx";
import "./UserProfile.css";

export default function UserProfilePage({ section }: PageProps) {
  const id = Number.parseInt(section, 10);
  const u = Number.isInteger(id) ? users.value.get(id) : undefined;
  void mutedUsers.value;
  if (!u)
    return (
      <section class="page user-profile" aria-label={t("User profile")}>
        <h1>{t("User profile")}</h1>
        <p>{t("No such user.")}</p>
      </section>
    );
  const email = visibleEmail(u);
  const time = localTime(u);
  const mine = u.user_id === me.value.id;
  return (
    <section class="page user-profile" aria-label={t("User profile")}>
      <div class="profile-head">
        <Avatar userId={u.user_id} name={u.full_name} url={u.avatar_url ?? undefined} size={120} />
        <div>
          <h1>{u.full_name}</h1>
          <UserStatusLine userId={u.user_id} />
        </div>
      </div>
      <dl class="user-facts profile-facts">
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
        <div>
          <dt>{t("Joined")}</dt>
          <dd>{new Date(u.date_joined).toLocaleDateString(undefined, { dateStyle: "long" })}</dd>
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
      <div class="user-card-actions">
        <button
          type="button"
          class="primary"
          onClick={() => {
            go({ kind: "dm", userIds: [u.user_id] });
            openCompose({ kind: "dm", userIds: [u.user_id] });
          }}
        >
          {t("Send direct message")}
        </button>
        <button type="button" onClick={() => go({ kind: "sender", userId: u.user_id })}>
          {t("View messages sent")}
        </button>
        {!mine && !u.is_bot && (
          <button
            type="button"
            onClick={() => void muteUser(u.user_id, !isMuted(u.user_id)).catch(() => {})}
          >
            {isMuted(u.user_id) ? t("Unmute user") : t("Mute user")}
          </button>
        )}
      </div>
    </section>
  );
}
