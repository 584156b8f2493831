/**
 * Settings › Account & privacy (Zulip's settings_account): the email, the password change, the
 * API key (shown once the password is given again, as Zulip's web app asks; regenerated; a
 * zuliprc file to download), and the privacy settings.
 */
import { useEffect, useState } from "preact/hooks";
import { api, call, errorText } from "../../api.ts";
import { t } from "../../i18n.ts";
import { me } from "../../state/model.ts";
import { realmSettings } from "../../state/settings.ts";
import { Dialog } from "../Dialog.tsx";
import { Field, FormSection, SaveStatus, useSave } from "../Form.tsx";
import { check, Settings } from "./common.tsx";

function ChangePassword({ onClose }: { onClose: () => void }) {
  const [oldPassword, setOld] = useState("");
  const [newPassword, setNew] = useState("");
  const [status, save] = useSave();
  return (
    <Dialog title={t("Change password")} onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save(() =>
            call(
              api.PATCH("/settings", {
                body: { old_password: oldPassword, new_password: newPassword },
              }),
            ),
          ).then((ok) => ok && setTimeout(onClose, 800));
        }}
      >
        <Field
          label={t("Old password")}
          type="password"
          value={oldPassword}
          onInput={setOld}
          autoComplete="current-password"
          required
        />
        <Field
          label={t("New password")}
          type="password"
          value={newPassword}
          onInput={setNew}
          autoComplete="new-password"
          required
        />
        <SaveStatus state={status} />
        <div class="dialog-buttons">
          <button type="button" onClick={onClose}>
            {t("Cancel")}
          </button>
          <button type="submit" class="primary">
            {t("Change")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Zulip's zuliprc: what the API bindings read (`[api]` email, key, site). */
export function zuliprc(email: string, key: string, site: string): string {
  return `[api]\nemail=${email}\nkey=${key}\nsite=${site}\n`;
}

function ApiKey({ onClose }: { onClose: () => void }) {
  const [password, setPassword] = useState("");
  const [key, setKey] = useState<string | undefined>(undefined);
  const [error, setError] = useState("");
  const [href, setHref] = useState("");
  const r = realmSettings.value;
  const site =
    typeof r.realm_url === "string"
      ? r.realm_url
      : typeof r.realm_uri === "string"
        ? r.realm_uri
        : location.origin;
  useEffect(() => {
    if (!key) return;
    const url = URL.createObjectURL(
      new Blob([zuliprc(me.value.email, key, site)], { type: "text/plain" }),
    );
    setHref(url);
    return () => URL.revokeObjectURL(url);
  }, [key, site]);
  return (
    <Dialog title={t("Manage your API key")} onClose={onClose}>
      {key === undefined ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setError("");
            call(api.POST("/fetch_api_key", { body: { username: me.value.email, password } }))
              .then((r) => setKey(r.api_key))
              .catch((err: unknown) => setError(errorText(err)));
          }}
        >
          <p>{t("Please re-enter your password to confirm your identity.")}</p>
          <Field
            label={t("Your password")}
            type="password"
            value={password}
            onInput={setPassword}
            autoComplete="current-password"
            required
          />
          {error && (
            <p class="save-status error" role="alert" aria-label={error}>
              {error}
            </p>
          )}
          <div class="dialog-buttons">
            <button type="submit" class="primary">
              {t("Get API key")}
            </button>
          </div>
        </form>
      ) : (
        <div>
          <label class="form-field">
            <span>{t("Your API key")}</span>
            <input class="settings-key" type="text" readOnly value={key} />
          </label>
          {error && (
            <p class="save-status error" role="alert" aria-label={error}>
              {error}
            </p>
          )}
          <div class="dialog-buttons">
            <button
              type="button"
              onClick={() => {
                setError("");
                call(api.POST("/users/me/api_key/regenerate"))
                  .then((r) => setKey(r.api_key))
                  .catch((err: unknown) => setError(errorText(err)));
              }}
            >
              {t("Generate new API key")}
            </button>
            {href && (
              <a class="button" href={href} download="zuliprc">
                {t("Download zuliprc")}
              </a>
            )}
          </div>
        </div>
      )}
    </Dialog>
  );
}

export function AccountSection() {
  const [dialog, setDialog] = useState<"password" | "api" | undefined>(undefined);
  return (
    <div>
      <FormSection title={t("Account")}>
        <p>
          {t("Email")}: <strong>{me.value.email}</strong>
        </p>
        <div class="settings-row">
          <button type="button" onClick={() => setDialog("password")}>
            {t("Change your password")}
          </button>
          <button type="button" onClick={() => setDialog("api")}>
            {t("Manage your API key")}
          </button>
        </div>
      </FormSection>
      <Settings
        sections={[
          {
            title: t("Privacy"),
            rows: [
              check("send_read_receipts", t("Allow others to see when I've read messages")),
              check(
                "send_private_typing_notifications",
                t("Let recipients see when I'm typing direct messages"),
              ),
              check(
                "send_stream_typing_notifications",
                t("Let recipients see when I'm typing messages in channels"),
              ),
              check("presence_enabled", t("Display my availability to other users")),
              check("allow_private_data_export", t("Let administrators export my private data")),
              {
                name: "email_address_visibility",
                label: t("Who can access your email address"),
                numeric: true,
                options: [
                  { value: "1", label: t("Admins, moderators, members and guests") },
                  { value: "2", label: t("Admins, moderators and members") },
                  { value: "5", label: t("Admins and moderators") },
                  { value: "3", label: t("Admins only") },
                  { value: "4", label: t("Nobody") },
                ],
              },
            ],
          },
        ]}
      />
      {dialog === "password" && <ChangePassword onClose={() => setDialog(undefined)} />}
      {dialog === "api" && <ApiKey onClose={() => setDialog(undefined)} />}
    </div>
  );
}
