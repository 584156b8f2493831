/**
 * Settings › Alert words (Zulip's alert_words_ui): words that notify like a mention; add and
 * remove (the `alert_words` event keeps the list current).
 */
import { useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { alertWords } from "../../state/settings.ts";
import { Field, SaveStatus, useSave } from "../Form.tsx";

export function AlertWordsSection() {
  const [word, setWord] = useState("");
  const [status, save] = useSave();
  const words = alertWords.value;
  return (
    <div>
      <p class="form-hint">
        {t("You are notified as if @-mentioned when these words or phrases are used.")}{" "}
        {t("Alert words are not case sensitive.")}
      </p>
      <form
        class="settings-row"
        onSubmit={(e) => {
          e.preventDefault();
          const w = word.trim();
          if (!w) return;
          void save(() =>
            call(api.POST("/users/me/alert_words", { body: { alert_words: [w] } as never })),
          ).then((ok) => ok && setWord(""));
        }}
      >
        <Field label={t("New alert word")} value={word} onInput={setWord} maxLength={100} />
        <button type="submit" class="primary">
          {t("Add alert word")}
        </button>
      </form>
      <SaveStatus state={status} />
      {words.length === 0 ? (
        <p class="settings-empty">{t("You have no alert words.")}</p>
      ) : (
        <ul class="settings-list" aria-label={t("Alert words")}>
          {words.map((w) => (
            <li key={w}>
              <span>{w}</span>
              <button
                type="button"
                aria-label={t("Delete alert word {word}", { word: w })}
                onClick={() =>
                  void save(() =>
                    call(
                      api.DELETE("/users/me/alert_words", {
                        body: { alert_words: [w] } as never,
                      }),
                    ),
                  )
                }
              >
                {t("Delete")}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
