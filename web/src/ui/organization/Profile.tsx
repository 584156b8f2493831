/** Organization profile (`#organization/organization-profile`): the name and the description. */
import { useEffect, useState } from "preact/hooks";
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { myRole, realmSettings } from "../../state/org.ts";
import { Field } from "../Form.tsx";
import { AdminOnly, SaveForm, Section, useStatus } from "./common.tsx";

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
      <SaveForm
        admin={admin}
        changed={changed}
        status={status}
        onSubmit={() => {
          const body: { name?: string; description?: string } = {};
          if (name !== savedName) body.name = name;
          if (description !== savedDescription) body.description = description;
          void run(() => call(api.PATCH("/realm", { body })));
        }}
      >
        <Field
          label={t("Organization name")}
          value={name}
          maxLength={40}
          readOnly={!admin}
          onInput={setName}
        />
        <Field
          label={t("Organization description")}
          rows={4}
          value={description}
          maxLength={1000}
          readOnly={!admin}
          onInput={setDescription}
        />
      </SaveForm>
    </Section>
  );
}
