/**
 * The offer to turn on desktop notifications (Zulip's "Zulip needs your permission to enable
 * desktop notifications" bar), while the browser has not been asked yet.
 */
import { useState } from "preact/hooks";
import { t } from "../i18n.ts";
import { askPermission, permission } from "../state/notify.ts";
import "./StatusDialog.css";

export function NotifyBanner() {
  const [dismissed, setDismissed] = useState(false);
  if (permission.value !== "default" || dismissed) return null;
  return (
    <div class="notify-banner" role="region" aria-label={t("Desktop notifications")}>
      <span>{t("Get notified of new messages while Zulip is in the background.")}</span>
      <button type="button" class="primary" onClick={() => void askPermission()}>
        {t("Enable desktop notifications")}
      </button>
      <button type="button" onClick={() => setDismissed(true)}>
        {t("Not now")}
      </button>
    </div>
  );
}
