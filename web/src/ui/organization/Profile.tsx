/** Organization profile (`#organization/organization-profile`): the name and the description. */
import { useEffect, useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { myRole, realmSettings } from "../../state/org.ts";
import { AdminOnly, Section, StatusText, useStatus } from "./common.tsx";

export function ProfileSection() {
  const admin = myRole.value.isAdmin;
  const savedName = (realmSettings.value.name as string | undefined) ?? "";
  const savedDescription = (realmSettings.value.description as string | undefined) ?? "";
  const [name, setName] = useState(savedName);
  const [description, setDescription] = useState(savedDescription);
  const [status, run] = useStatus();
  // A change made elsewhere (another administrator) shows here.
  useEffect(() => setName(savedName), [savedName]);
  useEffect(() => setDescription(savedDescription), [savedDescription]);
  const changed = name !== savedName || description !== savedDescription;
  return (
    <Section title={t("Organization profile")}>
      {!admin && <AdminOnly />}
      <form
        class="org-form"
        onSubmit={(e) => {
          e.preventDefault();
          const body: { name?: string; description?: string } = {};
          if (name !== savedName) body.name = name;
          if (description !== savedDescription) body.description = description;
          void run(() => call(api.PATCH("/realm", { body })));
        }}
      >
        <label class="org-field">
          <span>{t("Organization name")}</span>
          <input
            type="text"
            value={name}
            maxLength={40}
            readOnly={!admin}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <label class="org-field">
          <span>{t("Organization description")}</span>
          <textarea
            rows={4}
            value={description}
            maxLength={1000}
            readOnly={!admin}
            onInput={(e) => setDescription(e.currentTarget.value)}
          />
        </label>
        {admin && (
          <div class="org-actions">
            <button type="submit" class="primary" disabled={!changed}>
              {t("Save changes")}
            </button>
            <StatusText status={status} />
          </div>
        )}
      </form>
    </Section>
  );
}
