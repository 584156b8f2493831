/**
 * A message of a muted user, collapsed as Zulip collapses it: no name, no content, and a button
 * that reveals this one message (its own row then, for the rest of the session).
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { t } from "../i18n.ts";
import { reveal, revealed } from "../state/muted-users.ts";
import type { Msg } from "../types.ts";
import { RecipientHeader } from "./RecipientHeader.tsx";
import { timeOfDay } from "./format.ts";
import "./MutedRow.css";

export function MutedRow({
  m,
  day,
  children,
}: {
  m: Msg;
  day: string | undefined;
  /** The message's own row, shown once revealed. */
  children: ComponentChildren;
}) {
  const [open, setOpen] = useState(false);
  if (open || revealed.value.has(m.id)) return <>{children}</>;
  const time = timeOfDay(m.timestamp);
  return (
    <article aria-label={t("Muted user, {time}", { time })} data-id={m.id}>
      {day !== undefined && <RecipientHeader m={m} day={day} />}
      <div class="msg first muted-sender">
        <div class="gutter">
          <span class="avatar" aria-hidden="true" style={{ width: "36px", height: "36px" }} />
        </div>
        <div class="body">
          <div class="meta">
            <span class="sender">{t("Muted user")}</span>
            <time dateTime={new Date(m.timestamp * 1000).toISOString()}>{time}</time>
          </div>
          <div class="content">
            <p>
              {t("This message was hidden because you have muted the sender.")}{" "}
              <button
                type="button"
                class="link-button"
                onClick={() => {
                  setOpen(true);
                  reveal(m.id);
                }}
              >
                {t("Click here to reveal.")}
              </button>
            </p>
          </div>
        </div>
      </div>
    </article>
  );
}
