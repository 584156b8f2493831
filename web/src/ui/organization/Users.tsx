/**
 * Users (`#organization/users`, `#organization/deactivated`): every user of the organization, from
 * the register's state kept current by `realm_user` events (nothing fetched), filtered by name or
 * email and shown a page at a time (10,000 users stay cheap), with the role select (PATCH /users/{id}), Deactivate (after a confirmation) and, on the deactivated
 * tab, Reactivate. The server's rules (only owners make or unmake owners...) come back as its errors.
 */
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { users } from "../../state/model.ts";
import { inactiveUsers, myRole } from "../../state/org.ts";
import type { User } from "../../types.ts";
import { Confirm } from "../Dialog.tsx";
import { ROLES, type Role, Section, StatusText, useStatus } from "./common.tsx";

const PAGE = 50;
const collator = new Intl.Collator();

export function UsersSection({ section }: { section: string }) {
  const deactivated = section === "deactivated";
  const [filter, setFilter] = useState("");
  const [start, setStart] = useState(0);
  const [confirming, setConfirming] = useState<User | undefined>(undefined);
  const [status, run] = useStatus();
  const owner = myRole.value.isOwner;

  // Everyone, from the register's state, kept current by events: nothing to fetch.
  const all = useMemo(() => {
    const list = [...users.value.values()];
    for (const u of inactiveUsers.value.values()) if (!users.value.has(u.user_id)) list.push(u);
    return list.filter((u) => !u.is_bot);
  }, [users.value, inactiveUsers.value]);
  // Bumped when a role change fails: the select shows the role the user still has.
  const [failures, setFailures] = useState(0);
  useEffect(() => setStart(0), [filter, deactivated]);

  const shown = useMemo(() => {
    const q = filter.trim().toLowerCase();
    return all
      .filter((u) => u.is_active !== deactivated)
      .filter(
        (u) => !q || u.full_name.toLowerCase().includes(q) || u.email.toLowerCase().includes(q),
      )
      .sort((a, b) => collator.compare(a.full_name, b.full_name));
  }, [all, filter, deactivated]);
  const page = shown.slice(start, start + PAGE);

  return (
    <Section title={deactivated ? t("Deactivated users") : t("Users")}>
      <div class="org-tabs" role="navigation" aria-label={t("User lists")}>
        <a href="#organization/users" aria-current={deactivated ? undefined : "page"}>
          {t("Users")}
        </a>
        <a href="#organization/deactivated" aria-current={deactivated ? "page" : undefined}>
          {t("Deactivated")}
        </a>
      </div>
      <input
        type="search"
        class="org-filter"
        aria-label={t("Filter users")}
        placeholder={t("Filter users")}
        value={filter}
        onInput={(e) => setFilter(e.currentTarget.value)}
      />
      <StatusText status={status} />
      {
        <table class="org-table">
          <thead>
            <tr>
              <th scope="col">{t("Name")}</th>
              <th scope="col">{t("Email")}</th>
              <th scope="col">{t("Role")}</th>
              <th scope="col">{t("Actions")}</th>
            </tr>
          </thead>
          <tbody>
            {page.map((u) => (
              <tr key={u.user_id}>
                <td>{u.full_name}</td>
                <td>{u.email}</td>
                <td>
                  {deactivated ? (
                    (ROLES.find((r) => r.value === u.role)?.label() ?? "")
                  ) : (
                    <select
                      key={failures}
                      aria-label={t("Role of {name}", { name: u.full_name })}
                      value={String(u.role)}
                      onChange={(e) => {
                        const role = Number(e.currentTarget.value) as Role;
                        void run(() =>
                          call(
                            api.PATCH("/users/{user_id}", {
                              params: { path: { user_id: u.user_id } },
                              body: { role },
                            }),
                          ),
                        ).then((ok) => ok || setFailures((n) => n + 1));
                      }}
                    >
                      {ROLES.filter((r) => owner || r.value !== 100 || u.role === 100).map((r) => (
                        <option key={r.value} value={String(r.value)}>
                          {r.label()}
                        </option>
                      ))}
                    </select>
                  )}
                </td>
                <td>
                  {deactivated ? (
                    <button
                      type="button"
                      aria-label={t("Reactivate {name}", { name: u.full_name })}
                      onClick={() =>
                        void run(() =>
                          call(
                            api.POST("/users/{user_id}/reactivate", {
                              params: { path: { user_id: u.user_id } },
                            }),
                          ),
                        )
                      }
                    >
                      {t("Reactivate")}
                    </button>
                  ) : (
                    <button
                      type="button"
                      class="danger"
                      aria-label={t("Deactivate {name}", { name: u.full_name })}
                      onClick={() => setConfirming(u)}
                    >
                      {t("Deactivate")}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      }
      {
        <div class="org-pager">
          <span>
            {shown.length === 0
              ? t("No users match.")
              : t("{from}–{to} of {total}", {
                  from: start + 1,
                  to: start + page.length,
                  total: shown.length,
                })}
          </span>
          <button type="button" disabled={start === 0} onClick={() => setStart(start - PAGE)}>
            {t("Previous")}
          </button>
          <button
            type="button"
            disabled={start + PAGE >= shown.length}
            onClick={() => setStart(start + PAGE)}
          >
            {t("Next")}
          </button>
        </div>
      }
      {confirming && (
        <Confirm
          title={t("Deactivate {name}?", { name: confirming.full_name })}
          action={t("Deactivate")}
          danger
          onClose={() => setConfirming(undefined)}
          onConfirm={() => {
            const u = confirming;
            void run(() =>
              call(api.DELETE("/users/{user_id}", { params: { path: { user_id: u.user_id } } })),
            );
          }}
        >
          {t(
            "By deactivating {name}, they will be logged out immediately. Their messages stay in the organization.",
            { name: confirming.full_name },
          )}
        </Confirm>
      )}
    </Section>
  );
}
