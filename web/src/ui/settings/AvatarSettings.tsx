/**
 * The avatar part of Settings › Profile (Zulip's settings_account avatar widget): the picture,
 * "Upload new avatar" (a file input) and "Delete avatar" (after a confirmation), both hidden while
 * the organization disables avatar changes for all but administrators. The new picture shows as
 * soon as the server's `realm_user` event arrives; a refusal shows the server's text.
 */
import { useRef, useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { me, users } from "../../state/model.ts";
import { realmSettings } from "../../state/settings.ts";
import { Confirm } from "../Dialog.tsx";
import { SaveStatus, useSave } from "../Form.tsx";
import "./AvatarSettings.css";

const IMAGE_TYPES = "image/png,image/jpeg,image/gif,image/webp";

export function AvatarSettings() {
  const mine = users.value.get(me.value.id);
  const [status, save] = useSave();
  const [confirming, setConfirming] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const disabled = realmSettings.value.realm_avatar_changes_disabled === true && !me.value.isAdmin;
  // An uploaded avatar is served by this server; a Gravatar is not, and cannot be deleted.
  const uploaded = mine?.avatar_url?.startsWith("/user_avatars/") ?? false;

  function upload(input: HTMLInputElement) {
    const file = input.files?.[0];
    if (!file) return;
    const form = new FormData();
    form.append("file", file, file.name);
    void save(() =>
      call(
        api.POST("/users/me/avatar", {
          body: form as never,
          bodySerializer: (b: unknown) => b as FormData,
          headers: { "Content-Type": null },
        }),
      ),
    ).finally(() => (input.value = ""));
  }

  return (
    <div class="settings-avatar">
      {mine?.avatar_url && <img src={mine.avatar_url} alt={t("Your avatar")} />}
      {disabled ? (
        <p class="avatar-hint">{t("Avatar changes are disabled in this organization.")}</p>
      ) : (
        <div class="avatar-actions">
          {/* The button opens the file input's chooser (a file input's own look cannot be styled). */}
          <button type="button" onClick={() => fileInput.current?.click()}>
            {t("Upload new avatar")}
          </button>
          <input
            ref={fileInput}
            type="file"
            hidden
            accept={IMAGE_TYPES}
            aria-label={t("Upload new avatar")}
            onChange={(e) => upload(e.currentTarget)}
          />
          {uploaded && (
            <button type="button" class="danger" onClick={() => setConfirming(true)}>
              {t("Delete avatar")}
            </button>
          )}
          <SaveStatus state={status} />
        </div>
      )}
      {confirming && (
        <Confirm
          title={t("Delete avatar")}
          action={t("Confirm")}
          danger
          onConfirm={() => void save(() => call(api.DELETE("/users/me/avatar")))}
          onClose={() => setConfirming(false)}
        >
          {t("Are you sure you want to delete your avatar?")}
        </Confirm>
      )}
    </div>
  );
}
