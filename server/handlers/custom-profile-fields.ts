/**
 * GET, POST and PATCH /realm/profile_fields, PATCH and DELETE /realm/profile_fields/{field_id},
 * PATCH and DELETE /users/me/profile_data (zerver/views/custom_profile_fields.py).
 */
import {
  doCreateCustomProfileField,
  doDeleteCustomProfileField,
  doRemoveOwnCustomProfileData,
  doReorderCustomProfileFields,
  doUpdateCustomProfileField,
  doUpdateOwnCustomProfileData,
} from "../actions/users/custom-profile-fields.ts";
import type { Handler } from "../http/types.ts";
import { realmFields } from "../lib/users/custom-profile-fields.ts";

export const getCustomProfileFields: Handler<"get-custom-profile-fields"> = async (
  _input,
  ctx,
) => ({
  custom_fields: await realmFields(ctx.db, ctx.realm.id),
});

export const createCustomProfileField: Handler<"create-custom-profile-field"> = async (
  { body },
  ctx,
) => ({
  id: await doCreateCustomProfileField(ctx, {
    name: body.name ?? "",
    hint: body.hint ?? "",
    fieldType: body.field_type,
    fieldData: body.field_data ?? {},
    displayInProfileSummary: body.display_in_profile_summary ?? false,
    required: body.required ?? false,
    editableByUser: body.editable_by_user ?? true,
    useForUserMatching: body.use_for_user_matching ?? false,
  }),
});

export const updateCustomProfileField: Handler<"update-custom-profile-field"> = async (
  { path, body },
  ctx,
) => {
  await doUpdateCustomProfileField(ctx, path.field_id, {
    name: body?.name,
    hint: body?.hint,
    fieldData: body?.field_data,
    displayInProfileSummary: body?.display_in_profile_summary,
    required: body?.required,
    editableByUser: body?.editable_by_user,
    useForUserMatching: body?.use_for_user_matching,
  });
  return {};
};

export const deleteCustomProfileField: Handler<"delete-custom-profile-field"> = async (
  { path },
  ctx,
) => {
  await doDeleteCustomProfileField(ctx, path.field_id);
  return {};
};

export const reorderCustomProfileFields: Handler<"reorder-custom-profile-fields"> = async (
  { body },
  ctx,
) => {
  await doReorderCustomProfileFields(ctx, body.order);
  return {};
};

export const updateCustomProfileData: Handler<"update-custom-profile-data"> = async (
  { body },
  ctx,
) => {
  await doUpdateOwnCustomProfileData(
    ctx,
    body.data.map((d) => ({ id: d.id, value: d.value ?? null })),
  );
  return {};
};

export const removeCustomProfileData: Handler<"remove-custom-profile-data"> = async (
  { body },
  ctx,
) => {
  await doRemoveOwnCustomProfileData(ctx, body.data);
  return {};
};
