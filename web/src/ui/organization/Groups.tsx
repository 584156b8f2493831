/**
 * User groups (`#organization/groups`, Zulip's `#groups`): the organization's named groups
 * (register `realm_user_groups`, kept current by `user_group` events: state/groups.ts), created
 * (POST /user_groups/create), their members added and removed (POST /user_groups/{id}/members),
 * and deactivated (POST /user_groups/{id}/deactivate).
 */
import { useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { users } from "../../state/model.ts";
import { groupList, type UserGroup } from "../../state/groups.ts";
import { Confirm } from "../Dialog.tsx";
import { Field } from "../Form.tsx";
import { AddForm, FormError, Section, useStatus } from "./common.tsx";

/** A user by email, or by full name when only one has it. */
function findUser(text: string): number | undefined {
  const q = text.trim().toLowerCase();
  const matches = [...users.value.values()].filter(
    (u) => u.email.toLowerCase() === q || u.full_name.toLowerCase() === q,
  );
  return matches.length === 1 ? matches[0]!.user_id : undefined;
}

function GroupCard({ g, run }: { g: UserGroup; run: ReturnType<typeof useStatus>[1] }) {
  const [adding, setAdding] = useState("");
  const [deactivating, setDeactivating] = useState(false);
  const members = g.members
    .map((id) => users.value.get(id))
    .filter((u) => u !== undefined)
    .sort((a, b) => a.full_name.localeCompare(b.full_name));
  const change = (body: { add?: number[]; delete?: number[] }) =>
    run(() =>
      call(
        api.POST("/user_groups/{user_group_id}/members", {
          params: { path: { user_group_id: g.id } },
          body,
        }),
      ),
    );
  return (
    <li class="org-card" aria-label={g.name}>
      <h3>{g.name}</h3>
      {g.description && <p class="org-note">{g.description}</p>}
      <ul class="org-members" aria-label={t("Members of {group}", { group: g.name })}>
        {members.map((u) => (
          <li key={u.user_id}>
            {u.full_name}
            <button
              type="button"
              class="link"
              aria-label={t("Remove {name} from {group}", { name: u.full_name, group: g.name })}
              onClick={() => void change({ delete: [u.user_id] })}
            >
              {t("Remove")}
            </button>
          </li>
        ))}
      </ul>
      <form
        class="org-inline"
        onSubmit={(e) => {
          e.preventDefault();
          const id = findUser(adding);
          if (id === undefined)
            return void run(() =>
              Promise.reject(new FormError(t("No user matches {text}.", { text: adding }))),
            );
          void change({ add: [id] }).then((ok) => ok && setAdding(""));
        }}
      >
        <input
          type="text"
          list="org-group-users"
          aria-label={t("Add member to {group}", { group: g.name })}
          placeholder={t("Name or email")}
          value={adding}
          onInput={(e) => setAdding(e.currentTarget.value)}
        />
        <button type="submit">{t("Add")}</button>
        <button type="button" class="danger" onClick={() => setDeactivating(true)}>
          {t("Deactivate group")}
        </button>
      </form>
      {deactivating && (
        <Confirm
          title={t("Deactivate {group}?", { group: g.name })}
          action={t("Deactivate")}
          danger
          onClose={() => setDeactivating(false)}
          onConfirm={() =>
            void run(() =>
              call(
                api.POST("/user_groups/{user_group_id}/deactivate", {
                  params: { path: { user_group_id: g.id } },
                }),
              ),
            )
          }
        >
          {t("The group can no longer be mentioned or used in permissions.")}
        </Confirm>
      )}
    </li>
  );
}

export function GroupsSection() {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [status, run] = useStatus();
  const groups = groupList()
    .filter((g) => !g.is_system_group && !g.deactivated)
    .sort((a, b) => a.name.localeCompare(b.name));
  // Suggestions for the member fields, bounded: a datalist of 10,000 names is no help.
  const suggestions = [...users.value.values()].slice(0, 500);
  return (
    <Section title={t("User groups")}>
      <AddForm
        title={t("Create user group")}
        submit={t("Create")}
        disabled={!name.trim()}
        status={status}
        onSubmit={() =>
          void run(async () => {
            await call(
              api.POST("/user_groups/create", {
                body: { name: name.trim(), description, members: [] },
              }),
            );
            setName("");
            setDescription("");
          })
        }
      >
        <Field label={t("User group name")} value={name} onInput={setName} />
        <Field label={t("User group description")} value={description} onInput={setDescription} />
      </AddForm>
      <datalist id="org-group-users">
        {suggestions.map((u) => (
          <option key={u.user_id} value={u.email}>
            {u.full_name}
          </option>
        ))}
      </datalist>
      {groups.length === 0 ? (
        <p class="org-note">{t("There are no user groups yet.")}</p>
      ) : (
        <ul class="org-cards" aria-label={t("User groups")}>
          {groups.map((g) => (
            <GroupCard key={g.id} g={g} run={run} />
          ))}
        </ul>
      )}
    </Section>
  );
}
