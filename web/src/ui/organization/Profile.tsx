/** Organization profile (`#organization/organization-profile`): the name and the description. */
import { api, call } from "../../api.ts";
import { t } from "../../i18n.ts";
import { myRole, realmSettings } from "../../state/org.ts";
import { Field } from "../Form.tsx";
import { AdminOnly, SaveForm, Section, useDraft, useStatus } from "./common.tsx";

export function ProfileSection() {
  const admin = myRole.value.isAdmin;
  const { form, set, changes, changed } = useDraft({
    name: (realmSettings.value.name as string | undefined) ?? "",
    description: (realmSettings.value.description as string | undefined) ?? "",
  });
  const [status, run] = useStatus();
  return (
    <Section title={t("Organization profile")}>
      {!admin && <AdminOnly />}
      <SaveForm
        admin={admin}
        changed={changed}
        status={status}
        onSubmit={() => void run(() => call(api.PATCH("/realm", { body: changes })))}
      >
        <Field
          label={t("Organization name")}
          value={form.name}
          maxLength={40}
          readOnly={!admin}
          onInput={(name) => set({ name })}
        />
        <Field
          label={t("Organization description")}
          rows={4}
          value={form.description}
          maxLength={1000}
          readOnly={!admin}
          onInput={(description) => set({ description })}
        />
      </SaveForm>
    </Section>
  );
}
