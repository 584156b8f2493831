/**
 * Setting my status (Zulip's "Set status" dialog): an emoji (its `:name:`), a text, Zulip's
 * presets, "Clear status"; and "Invisible mode" (others see me offline: `presence_enabled` off,
 * the status's `away`).
 */
import { signal } from "@preact/signals";
import { useState } from "preact/hooks";
import { errorText } from "../api.ts";
import { t } from "../i18n.ts";
import { emojiChar } from "../state/emoji.ts";
import { me } from "../state/model.ts";
import { presenceEnabled, PRESETS, setAway, setMyStatus, statusOf } from "../state/status.ts";
import { Dialog } from "./Dialog.tsx";
import { StatusEmoji } from "./people.tsx";
import "./StatusDialog.css";

const open = signal(false);

/** The "me" area's button: my status emoji (or a smiley), opening the dialog. */
export function StatusButton() {
  const mine = statusOf(me.value.id);
  return (
    <>
      <button
        type="button"
        class="status-button"
        aria-label={t("Set status")}
        title={mine?.status_text ?? t("Set status")}
        onClick={() => (open.value = true)}
      >
        {mine?.emoji_name ? <StatusEmoji status={mine} /> : <span aria-hidden="true">☺</span>}
      </button>
      {open.value && <StatusDialog onClose={() => (open.value = false)} />}
    </>
  );
}

function StatusDialog({ onClose }: { onClose: () => void }) {
  const mine = statusOf(me.value.id);
  const [emoji, setEmoji] = useState(mine?.emoji_name ? `:${mine.emoji_name}:` : "");
  const [code, setCode] = useState<string | undefined>(mine?.emoji_code);
  const [text, setText] = useState(mine?.status_text ?? "");
  const [error, setError] = useState<string | undefined>();
  const save = async (s: { text: string; emoji: string; code?: string }) => {
    const name = s.emoji.trim().replace(/^:|:$/g, "");
    try {
      await setMyStatus({
        status_text: s.text.trim(),
        emoji_name: name,
        ...(name && s.code ? { emoji_code: s.code, reaction_type: "unicode_emoji" as const } : {}),
      });
      onClose();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <Dialog title={t("Set status")} onClose={onClose}>
      <form
        class="status-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save({ text, emoji, code });
        }}
      >
        <div class="status-fields">
          <label>
            <span>{t("Emoji")}</span>
            <input
              type="text"
              value={emoji}
              placeholder=":smile:"
              onInput={(e) => {
                setEmoji(e.currentTarget.value);
                setCode(undefined);
              }}
            />
          </label>
          <label>
            <span>{t("Status text")}</span>
            <input
              type="text"
              value={text}
              maxLength={60}
              placeholder={t("Your status")}
              onInput={(e) => setText(e.currentTarget.value)}
            />
          </label>
        </div>
        <ul class="status-presets" aria-label={t("Suggested statuses")}>
          {PRESETS.map((p) => (
            <li key={p.text}>
              <button
                type="button"
                onClick={() => {
                  setEmoji(`:${p.emoji_name}:`);
                  setCode(p.emoji_code);
                  setText(t(p.text));
                }}
              >
                <span aria-hidden="true" class="preset-emoji">
                  {emojiChar(p.emoji_code)}
                </span>
                {t(p.text)}
              </button>
            </li>
          ))}
        </ul>
        <label class="status-away">
          <input
            type="checkbox"
            checked={!presenceEnabled.value}
            onChange={(e) =>
              void setAway(e.currentTarget.checked).catch((err) => setError(errorText(err)))
            }
          />
          {t("Invisible mode (appear offline)")}
        </label>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <div class="dialog-buttons">
          <button type="button" onClick={() => void save({ text: "", emoji: "" })}>
            {t("Clear status")}
          </button>
          <button type="submit" class="primary">
            {t("Save")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
