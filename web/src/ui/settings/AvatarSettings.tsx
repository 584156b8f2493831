/** The avatar part of Settings › Profile: the picture, "Upload new profile picture", "Delete". */
import { me, users } from "../../state/model.ts";
import { t } from "../../i18n.ts";

export function AvatarSettings() {
  const mine = users.value.get(me.value.id);
  return (
    <div class="settings-avatar">
      {mine?.avatar_url && <img src={mine.avatar_url} alt={t("Your profile picture")} />}
    </div>
  );
}
