/**
 * A user's facts, as the user card (UserCard.tsx) and the full profile (UserProfile.tsx) show
 * them: the email where visible, the role, when they joined (the profile), their local time,
 * when they were last active and their custom profile fields; and the actions both offer.
 */
import type { ComponentChildren } from "preact";
import { t } from "../i18n.ts";
import { openCompose } from "../state/compose.ts";
import { me } from "../state/model.ts";
import { isMuted, muteUser } from "../state/muted-users.ts";
import { go } from "../state/view.ts";
import type { User } from "../types.ts";
import { lastActive, localTime, ProfileFields, roleName } from "./people.tsx";

/** The email others may see: the real one when visible, else none (the dummy is not an address). */
export function visibleEmail(u: {
  delivery_email: string | null;
  email: string;
}): string | undefined {
  return u.delivery_email ?? undefined;
}

function Fact({ term, children }: { term: string; children: ComponentChildren }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

export function UserFacts({
  u,
  joined,
  class: cls,
}: {
  u: User;
  joined?: boolean;
  class?: string;
}) {
  const email = visibleEmail(u);
  const time = localTime(u);
  return (
    <dl class={cls ? `user-facts ${cls}` : "user-facts"}>
      {email && <Fact term={t("Email")}>{email}</Fact>}
      <Fact term={t("Role")}>{roleName(u)}</Fact>
      {joined && (
        <Fact term={t("Joined")}>
          {new Date(u.date_joined).toLocaleDateString(undefined, { dateStyle: "long" })}
        </Fact>
      )}
      {time && <Fact term={t("Local time")}>{time}</Fact>}
      <Fact term={t("Last active")}>
        {u.user_id === me.value.id ? t("Active now") : lastActive(u.user_id)}
      </Fact>
      <ProfileFields u={u} />
    </dl>
  );
}

/**
 * "Send direct message", "View messages sent", then `children` (the card's own), then "Mute user"
 * or "Unmute user" (not for oneself or a bot). `then` runs before each (the card closes).
 */
export function UserActions({
  u,
  then = () => {},
  children,
}: {
  u: User;
  then?: () => void;
  children?: ComponentChildren;
}) {
  const done = (f: () => void) => () => {
    then();
    f();
  };
  return (
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
      {children}
      {u.user_id !== me.value.id && !u.is_bot && (
        <button
          type="button"
          onClick={() => void muteUser(u.user_id, !isMuted(u.user_id)).catch(() => {})}
        >
          {isMuted(u.user_id) ? t("Unmute user") : t("Mute user")}
        </button>
      )}
    </div>
  );
}
