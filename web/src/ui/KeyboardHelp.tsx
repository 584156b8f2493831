/**
 * The "Keyboard shortcuts" dialog (`?`, and Zulip's desktop app's "Keyboard shortcuts" menu
 * item): every shortcut described where it is bound (keys.ts), grouped under Zulip's headings.
 */
import { t } from "../i18n.ts";
import { KEY_GROUPS, keyboardHelpOpen, keyList, type KeyGroup } from "../keys.ts";
import { Dialog } from "./Dialog.tsx";
import "./KeyboardHelp.css";

export { openKeyboardHelp } from "../keys.ts";

export function KeyboardHelp() {
  if (!keyboardHelpOpen.value) return null;
  const keys = keyList();
  const groups = Object.keys(KEY_GROUPS) as KeyGroup[];
  return (
    <Dialog title={t("Keyboard shortcuts")} onClose={() => (keyboardHelpOpen.value = false)} wide>
      <div class="keyboard-help">
        {groups.map((g) => {
          const rows = keys.filter((k) => k.group === g);
          if (!rows.length) return null;
          return (
            <section key={g}>
              <h3>{KEY_GROUPS[g]()}</h3>
              <table>
                <tbody>
                  {rows.map((k) => (
                    <tr key={k.keys}>
                      <td>{k.description}</td>
                      <td>
                        {k.keys.split(" or ").map((key, i) => (
                          <>
                            {i > 0 && ` ${t("or")} `}
                            <kbd>{key}</kbd>
                          </>
                        ))}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
          );
        })}
      </div>
    </Dialog>
  );
}
