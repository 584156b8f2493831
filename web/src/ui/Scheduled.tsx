/**
 * The Scheduled messages page (Zulip's `#scheduled`): the messages waiting to be sent, soonest
 * first, each with its conversation, its rendered content and when it is due; "Edit" reopens it
 * in the compose box (sending saves the edit), "Delete" deletes it.
 */
import { useState } from "preact/hooks";
import { errorText } from "../api.ts";
import { t } from "../i18n.ts";
import { draft, openCompose } from "../state/compose.ts";
import { conversationLabel } from "../state/drafts.ts";
import {
  deleteScheduled,
  editingScheduled,
  scheduled,
  type ScheduledMessage,
} from "../state/scheduled.ts";
import type { Conversation } from "../state/typing.ts";
import { go } from "../state/view.ts";
import { postprocess } from "./content.ts";
import { narrowOf } from "./Drafts.tsx";
import { fullDate } from "./format.ts";
import type { PageProps } from "./PageHost.tsx";
import { SavedRow } from "./SavedRow.tsx";

function targetOf(m: ScheduledMessage): Conversation {
  const to = m.to;
  return m.type === "stream"
    ? { kind: "stream", streamId: Array.isArray(to) ? to[0]! : to, topic: m.topic ?? "" }
    : { kind: "dm", userIds: Array.isArray(to) ? to : [to] };
}

function edit(m: ScheduledMessage) {
  const target = targetOf(m);
  editingScheduled.value = m;
  go(narrowOf(target));
  openCompose(undefined);
  draft.value = m.content;
}

export default function ScheduledPage(_: PageProps) {
  const [error, setError] = useState<string | undefined>(undefined);
  const list = [...scheduled.value.values()].sort(
    (a, b) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp,
  );
  return (
    <section class="page scheduled-page" aria-label={t("Scheduled messages")}>
      <h1>{t("Scheduled messages")}</h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {list.length === 0 ? (
        <p class="empty">{t("No scheduled messages.")}</p>
      ) : (
        <ul class="saved-list" aria-label={t("Scheduled messages")}>
          {list.map((m) => {
            const where = conversationLabel(targetOf(m));
            const when = fullDate(m.scheduled_delivery_timestamp);
            return (
              <SavedRow
                key={m.scheduled_message_id}
                where={where}
                timestamp={m.scheduled_delivery_timestamp}
                when={t("Scheduled for {time}", { time: when })}
                reopen={{
                  text: t("Edit"),
                  label: t("Edit message scheduled for {time}", { time: when }),
                  onClick: () => edit(m),
                }}
                remove={{
                  label: t("Delete message scheduled for {time}", { time: when }),
                  onClick: () =>
                    void deleteScheduled(m.scheduled_message_id).then(
                      () => setError(undefined),
                      (err) => setError(errorText(err)),
                    ),
                }}
              >
                {m.failed && <p class="failed">{t("This message could not be sent.")}</p>}
                <div
                  class="content"
                  dangerouslySetInnerHTML={{ __html: postprocess(m.rendered_content) }}
                />
              </SavedRow>
            );
          })}
        </ul>
      )}
    </section>
  );
}
