/** The banner while the server cannot be reached: when the next attempt is, and a button to try now. */
import { useEffect, useState } from "preact/hooks";
import { t } from "../i18n.ts";
import { connection, retryNow } from "../state/events.ts";

export function Banner() {
  const c = connection.value;
  const [, tick] = useState(0);
  useEffect(() => {
    if (!c) return;
    const t = setInterval(() => tick((x) => x + 1), 1000);
    return () => clearInterval(t);
  }, [c]);
  if (!c) return null;
  const seconds = Math.max(0, Math.ceil((c.retryAt - Date.now()) / 1000));
  return (
    <div class="banner" role="alert">
      <span>
        {t("Unable to connect to the server.")}{" "}
        {c.retryAt === 0
          ? ""
          : seconds > 0
            ? t("Trying again in {seconds} s…", { seconds })
            : t("Trying again…")}
      </span>
      <button type="button" onClick={retryNow}>
        {t("Try now")}
      </button>
    </div>
  );
}
