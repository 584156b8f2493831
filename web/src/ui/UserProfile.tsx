/**
 * A user's full profile (`#user/<id>`, Zulip's "View full profile"): avatar, name, status, email
 * where visible, role, when they joined, local time, last activity and every custom profile
 * field, with the card's actions.
 */
import { t } from "../i18n.ts";
import { users } from "../state/model.ts";
import { mutedUsers } from "../state/muted-users.ts";
import { Avatar } from "./Avatar.tsx";
import type { PageProps } from "./PageHost.tsx";
import { UserStatusLine } from "./people.tsx";
import { UserActions, UserFacts } from "./UserFacts.tsx";
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
  return (
    <section class="page user-profile" aria-label={t("User profile")}>
      <div class="profile-head">
        <Avatar userId={u.user_id} name={u.full_name} url={u.avatar_url ?? undefined} size={120} />
        <div>
          <h1>{u.full_name}</h1>
          <UserStatusLine userId={u.user_id} />
        </div>
      </div>
      <UserFacts u={u} joined class="profile-facts" />
      <UserActions u={u} />
    </section>
  );
}
