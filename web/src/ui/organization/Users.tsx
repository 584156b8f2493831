/**
 * Users (`#organization/users`, `#organization/deactivated`): every user of the organization, from
 * the register's state kept current by `realm_user` events (nothing fetched), filtered by name or
 * email and shown a page at a time (10,000 users stay cheap: AdminTable), with the role select
 * (PATCH /users/{id}), Deactivate (after a confirmation) and, on the deactivated tab, Reactivate. The server's rules (only owners make or unmake owners...) come back as its errors.
 */
import { useMemo, useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { users } from "../../state/model.ts";
import { inactiveUsers, myRole } from "../../state/org.ts";
import type { User } from "../../types.ts";
import { AdminTable } from "./AdminTable.tsx";
import { ROLES, type Role, Section, StatusText, useStatus } from "./common.tsx";

const collator = new Intl.Collator();

export function UsersSection({ section }: { section: string }) {
  const deactivated = section === "deactivated";
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
  const rows = useMemo(
    () =>
      all
        .filter((u) => u.is_active !== deactivated)
        .sort((a, b) => collator.compare(a.full_name, b.full_name)),
    [all, deactivated],
  );
  const roleSelect = (u: User) => (
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
  );

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
      <AdminTable
        key={section}
        rows={rows}
        rowKey={(u) => u.user_id}
        filter={{
          label: t("Filter users"),
          match: (u, q) =>
            u.full_name.toLowerCase().includes(q) || u.email.toLowerCase().includes(q),
        }}
        empty={t("No users match.")}
        before={<StatusText status={status} />}
        columns={[
          { header: t("Name"), cell: (u) => u.full_name },
          { header: t("Email"), cell: (u) => u.email },
          {
            header: t("Role"),
            cell: (u) =>
              deactivated ? (ROLES.find((r) => r.value === u.role)?.label() ?? "") : roleSelect(u),
          },
        ]}
        actions={(u) => [
          deactivated
            ? {
                label: t("Reactivate"),
                name: t("Reactivate {name}", { name: u.full_name }),
                onClick: () =>
                  void run(() =>
                    call(
                      api.POST("/users/{user_id}/reactivate", {
                        params: { path: { user_id: u.user_id } },
                      }),
                    ),
                  ),
              }
            : {
                label: t("Deactivate"),
                name: t("Deactivate {name}", { name: u.full_name }),
                danger: true,
                confirm: {
                  title: t("Deactivate {name}?", { name: u.full_name }),
                  body: t(
                    "By deactivating {name}, they will be logged out immediately. Their messages stay in the organization.",
                    { name: u.full_name },
                  ),
                  onConfirm: () =>
                    void run(() =>
                      call(
                        api.DELETE("/users/{user_id}", {
                          params: { path: { user_id: u.user_id } },
                        }),
                      ),
                    ),
                },
              },
        ]}
      />
    </Section>
  );
}
