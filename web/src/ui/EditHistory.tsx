/**
 * A message's edit history (GET /messages/{id}/history, Zulip's message_edit_history.ts): each
 * version, oldest first, with who made it and when, and what changed: the content (as rendered),
 * the topic, the channel. The server already leaves out what the organization's
 * message_edit_history_visibility_policy hides.
 */
import { useEffect, useState } from "preact/hooks";
import { api, call, errorText } from "../api.ts";
import { t } from "../i18n.ts";
import { displayTopic, subscriptions, users } from "../state/model.ts";
import type { Msg } from "../types.ts";
import { postprocess } from "./content.ts";
import { Dialog } from "./Dialog.tsx";
import { fullDate } from "./format.ts";

interface Entry {
  topic: string;
  prev_topic?: string;
  stream?: number;
  prev_stream?: number;
  rendered_content: string | null;
  prev_content?: string;
  timestamp: number;
  user_id: number | null;
}

function channelName(id: number | undefined): string {
  return id === undefined ? "" : `#${subscriptions.value.get(id)?.name ?? t("unknown channel")}`;
}

export function EditHistory({ m, onClose }: { m: Msg; onClose: () => void }) {
  const [entries, setEntries] = useState<Entry[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    call(
      api.GET("/messages/{message_id}/history", {
        params: { path: { message_id: m.id }, query: { allow_empty_topic_name: true } },
      }),
    )
      .then((r) => setEntries(r.message_history as Entry[]))
      .catch((err: unknown) => setError(errorText(err)));
  }, [m.id, m.last_edit_timestamp, m.last_moved_timestamp]);
  return (
    <Dialog title={t("Message edit history")} onClose={onClose} wide>
      {error ? (
        <p role="alert" class="error">
          {error}
        </p>
      ) : !entries ? (
        <p>{t("Loading…")}</p>
      ) : (
        <ol class="edit-history" aria-label={t("Versions")}>
          {entries.map((e, i) => {
            const who =
              e.user_id === null
                ? t("Unknown user")
                : (users.value.get(e.user_id)?.full_name ?? t("Unknown user"));
            const when = fullDate(e.timestamp);
            const contentEdited = e.prev_content !== undefined;
            const topicMoved = e.prev_topic !== undefined;
            const channelMoved = e.prev_stream !== undefined;
            const what =
              i === 0
                ? t("Posted by {name}", { name: who })
                : contentEdited
                  ? t("Edited by {name}", { name: who })
                  : t("Moved by {name}", { name: who });
            return (
              <li key={i} aria-label={`${what}, ${when}`}>
                <div class="who">
                  {what} · <time dateTime={new Date(e.timestamp * 1000).toISOString()}>{when}</time>
                </div>
                {topicMoved && (
                  <div class="change">
                    {t("Topic: {old} → {new}", {
                      old: displayTopic(e.prev_topic!),
                      new: displayTopic(e.topic),
                    })}
                  </div>
                )}
                {channelMoved && (
                  <div class="change">
                    {t("Channel: {old} → {new}", {
                      old: channelName(e.prev_stream),
                      new: channelName(e.stream),
                    })}
                  </div>
                )}
                {(i === 0 || contentEdited) && e.rendered_content !== null && (
                  <div
                    class="content"
                    dangerouslySetInnerHTML={{ __html: postprocess(e.rendered_content) }}
                  />
                )}
              </li>
            );
          })}
        </ol>
      )}
    </Dialog>
  );
}
