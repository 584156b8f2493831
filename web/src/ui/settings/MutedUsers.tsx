/** Settings › Muted users (Zulip's settings_muted_users): who is muted, since when, and Unmute. */
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { users } from "../../state/model.ts";
import { mutedUsers } from "../../state/settings.ts";
import { SaveStatus, useSave } from "../Form.tsx";

export function MutedUsersSection() {
  const [status, save] = useSave();
  const list = mutedUsers.value;
  return (
    <div>
      <SaveStatus state={status} />
      {list.length === 0 ? (
        <p class="settings-empty">{t("You have not muted any users yet.")}</p>
      ) : (
        <ul class="settings-list" aria-label={t("Muted users")}>
          {list.map((m) => {
            const name = users.value.get(m.id)?.full_name ?? t("Unknown user");
            return (
              <li key={m.id}>
                <span>
                  {name}{" "}
                  <small class="form-hint">
                    {t("Muted since {date}", {
                      date: new Date(m.timestamp * 1000).toLocaleDateString(),
                    })}
                  </small>
                </span>
                <button
                  type="button"
                  aria-label={t("Unmute {name}", { name })}
                  onClick={() =>
                    void save(() =>
                      call(
                        api.DELETE("/users/me/muted_users/{muted_user_id}", {
                          params: { path: { muted_user_id: m.id } },
                        }),
                      ),
                    )
                  }
                >
                  {t("Unmute")}
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
