/**
 * Custom profile fields and users' values (zerver/actions/custom_profile_fields.py): the
 * organization's fields (administrators only; each change sends the whole list to everyone as a
 * `custom_profile_fields` event) and a user's values (a `realm_user` `update` event per changed
 * value).
 */
import type { RequestContext } from "../../context.ts";
import { Prisma, type Realm, type Tx, type UserProfile } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import type { UnitOfWork } from "../../events/index.ts";
import {
  accessField,
  checkFieldDefinition,
  checkFieldValue,
  checkUserIds,
  DEFAULT_EXTERNAL_ACCOUNTS,
  defaultExternalSubtype,
  FieldType,
  fieldNotFound,
  isRenderable,
  MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS,
  realmFields,
  storedFieldData,
  type FieldData,
} from "../../lib/users/custom-profile-fields.ts";
import { renderMarkdown } from "../../lib/markdown/index.ts";
import { isStorableId } from "../../lib/ids.ts";
import {
  activeUserIds,
  humanUsersOnly,
  isRealmAdmin,
  requireRealmAdmin,
} from "../../lib/users/users.ts";
import { inTransaction } from "../transaction.ts";

const duplicateLabel = () => new JsonableError("A field with that label already exists.");

/** notify_realm_custom_profile_fields: the whole list, to everyone. */
async function notifyFields({ tx, events }: UnitOfWork, realmId: number) {
  events.add(
    { type: "custom_profile_fields", fields: await realmFields(tx, realmId) },
    await activeUserIds(tx, realmId),
  );
}

/** display_in_profile_summary_limit_reached: 2 fields are shown already (this one aside). */
async function refuseSummaryOverLimit(tx: Tx, realmId: number, exceptId?: number) {
  const shown = await tx.customProfileField.count({
    where: {
      realmId,
      displayInProfileSummary: true,
      ...(exceptId ? { id: { not: exceptId } } : {}),
    },
  });
  if (shown >= MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS)
    throw new JsonableError(
      `Only ${MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`,
    );
}

async function refuseDuplicateLabel(tx: Tx, realmId: number, name: string, exceptId?: number) {
  const same = await tx.customProfileField.findFirst({
    where: { realmId, name, ...(exceptId ? { id: { not: exceptId } } : {}) },
    select: { id: true },
  });
  if (same) throw duplicateLabel();
}

/** The unique (realm, name) index refusing a label a concurrent request took. */
async function labelled<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002")
      throw duplicateLabel();
    throw e;
  }
}

/** Only dropdown and external account fields keep field_data; the others store none. */
const keepsFieldData = (fieldType: number) =>
  fieldType === FieldType.SELECT || fieldType === FieldType.EXTERNAL_ACCOUNT;

export interface NewField {
  name: string;
  hint: string;
  fieldType: number;
  fieldData: FieldData;
  displayInProfileSummary: boolean;
  required: boolean;
  editableByUser: boolean;
  useForUserMatching: boolean;
}

/**
 * create_realm_custom_profile_field: the summary limit, the definition's checks, then the field,
 * whose `order` is its id. A github/twitter field is named by the server.
 */
export async function doCreateCustomProfileField(
  ctx: RequestContext,
  input: NewField,
): Promise<number> {
  requireRealmAdmin(ctx.user);
  const realmId = ctx.realm.id;
  return inTransaction(ctx, realmId, async ({ tx, events }) => {
    if (input.displayInProfileSummary) await refuseSummaryOverLimit(tx, realmId);
    const definition = { ...input, name: input.name.trim() };
    checkFieldDefinition(definition);
    const subtype = defaultExternalSubtype(input.fieldType, input.fieldData);
    const { name, hint } = subtype ? DEFAULT_EXTERNAL_ACCOUNTS[subtype]! : definition;
    const fieldData = subtype ? { subtype } : input.fieldData;
    await refuseDuplicateLabel(tx, realmId, name);
    const field = await labelled(
      tx.customProfileField.create({
        data: {
          realmId,
          name,
          hint,
          fieldType: input.fieldType,
          fieldData: keepsFieldData(input.fieldType)
            ? (fieldData as Prisma.InputJsonObject)
            : Prisma.DbNull,
          displayInProfileSummary: input.displayInProfileSummary,
          required: input.required,
          editableByUser: input.editableByUser,
          useForUserMatching: input.useForUserMatching,
        },
        select: { id: true },
      }),
    );
    await tx.customProfileField.update({ where: { id: field.id }, data: { order: field.id } });
    await notifyFields({ tx, events }, realmId);
    return field.id;
  });
}

export type FieldChanges = Partial<Omit<NewField, "fieldType">>;

/**
 * update_realm_custom_profile_field: the sent parameters, checked with the field's other values
 * as at creation. Of a github/twitter field only the flags may change. Dropping a dropdown
 * choice clears the values that chose it.
 */
export async function doUpdateCustomProfileField(
  ctx: RequestContext,
  fieldId: number,
  changes: FieldChanges,
) {
  requireRealmAdmin(ctx.user);
  const realmId = ctx.realm.id;
  await inTransaction(ctx, realmId, async ({ tx, events }) => {
    const field = await accessField(tx, realmId, fieldId);
    if (changes.displayInProfileSummary) await refuseSummaryOverLimit(tx, realmId, field.id);
    const name = changes.name?.trim();
    const stored = storedFieldData(field);
    if (
      defaultExternalSubtype(field.fieldType, stored) &&
      ((name !== undefined && name !== field.name) ||
        (changes.hint !== undefined && changes.hint !== field.hint) ||
        (changes.fieldData !== undefined &&
          JSON.stringify(changes.fieldData) !== JSON.stringify(stored)))
    )
      throw new JsonableError("Default custom field cannot be updated.");
    checkFieldDefinition({
      name: name ?? field.name,
      hint: changes.hint ?? field.hint,
      fieldType: field.fieldType,
      fieldData: changes.fieldData ?? stored,
      displayInProfileSummary: changes.displayInProfileSummary ?? field.displayInProfileSummary,
      useForUserMatching: changes.useForUserMatching ?? field.useForUserMatching,
    });
    if (name !== undefined) await refuseDuplicateLabel(tx, realmId, name, field.id);
    const data: Prisma.CustomProfileFieldUpdateInput = {
      name,
      hint: changes.hint,
      displayInProfileSummary: changes.displayInProfileSummary,
      required: changes.required,
      editableByUser: changes.editableByUser,
      useForUserMatching: changes.useForUserMatching,
    };
    if (changes.fieldData !== undefined && keepsFieldData(field.fieldType)) {
      data.fieldData = changes.fieldData as Prisma.InputJsonObject;
      if (field.fieldType === FieldType.SELECT) {
        const removed = Object.keys(stored).filter((k) => !Object.hasOwn(changes.fieldData!, k));
        if (removed.length)
          await tx.customProfileFieldValue.deleteMany({
            where: { fieldId: field.id, value: { in: removed } },
          });
      }
    }
    await labelled(tx.customProfileField.update({ where: { id: field.id }, data }));
    await notifyFields({ tx, events }, realmId);
  });
}

/** do_remove_realm_custom_profile_field: the field and every value of it. */
export async function doDeleteCustomProfileField(ctx: RequestContext, fieldId: number) {
  requireRealmAdmin(ctx.user);
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const field = await accessField(tx, ctx.realm.id, fieldId);
    await tx.customProfileField.delete({ where: { id: field.id } });
    await notifyFields({ tx, events }, ctx.realm.id);
  });
}

/**
 * try_reorder_realm_custom_profile_fields: each field's order becomes its (last) position in
 * `order`; every field must be listed. One UPDATE for all of them.
 */
export async function doReorderCustomProfileFields(ctx: RequestContext, order: number[]) {
  requireRealmAdmin(ctx.user);
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const position = new Map(order.map((id, i) => [id, i]));
    const fields = await tx.customProfileField.findMany({
      where: { realmId: ctx.realm.id },
      select: { id: true },
    });
    if (fields.some((f) => !position.has(f.id))) throw new JsonableError("Invalid order mapping.");
    if (fields.length) {
      const ids = fields.map((f) => f.id);
      await tx.$executeRaw`
        UPDATE custom_profile_field f SET "order" = m.ord
        FROM unnest(${ids}::int[], ${ids.map((id) => position.get(id)!)}::int[]) AS m(id, ord)
        WHERE f.id = m.id`;
    }
    await notifyFields({ tx, events }, ctx.realm.id);
  });
}

export interface ProfileDataItem {
  id: number;
  value: string | number[] | null;
}

/**
 * A user's custom profile values (validate_user_custom_profile_data, then
 * do_update_user_custom_profile_data_if_changed and check_remove_custom_profile_field_value):
 * every item is checked before anything is written (the field exists, the actor may edit it,
 * the value suits its type); `null`, "" or [] clears the value. Administrators may edit fields
 * users cannot (PATCH /users/{user_id} passes its administrator here). Unchanged values are
 * left alone; each change is one `realm_user` `update` event. A fixed number of statements
 * whatever the number of items.
 */
export async function doUpdateUserCustomProfileData(
  { tx, events }: UnitOfWork,
  realm: Pick<Realm, "id">,
  actor: Pick<UserProfile, "role">,
  target: Pick<UserProfile, "id">,
  data: ProfileDataItem[],
) {
  const ids = [...new Set(data.map((d) => d.id))];
  const fields = new Map(
    (
      await tx.customProfileField.findMany({
        where: { realmId: realm.id, id: { in: ids.filter(isStorableId) } },
      })
    ).map((f) => [f.id, f]),
  );
  // The last item of a field wins, as Zulip applies them in turn.
  const wanted = new Map<number, string | null>();
  const userLists: number[][] = [];
  for (const item of data) {
    const field = fields.get(item.id);
    if (!field) throw fieldNotFound(item.id);
    if (!isRealmAdmin(actor) && !field.editableByUser)
      throw new JsonableError(
        "You are not allowed to change this field. Contact an administrator to update it.",
      );
    const clears =
      item.value === null ||
      item.value === "" ||
      (Array.isArray(item.value) && item.value.length === 0);
    if (!clears && field.fieldType === FieldType.USER && Array.isArray(item.value))
      userLists.push(item.value);
    wanted.set(field.id, clears ? null : checkFieldValue(field, item.value));
  }
  await checkUserIds(tx, realm.id, userLists);

  const current = new Map(
    (
      await tx.customProfileFieldValue.findMany({
        where: { userProfileId: target.id, fieldId: { in: [...wanted.keys()] } },
        select: { fieldId: true, value: true },
      })
    ).map((v) => [v.fieldId, v.value]),
  );
  const cleared = [...wanted].filter(([id, v]) => v === null && current.has(id)).map(([id]) => id);
  const set = [...wanted]
    .filter((e): e is [number, string] => e[1] !== null && current.get(e[0]) !== e[1])
    .map(([id, value]) => ({
      id,
      value,
      rendered: isRenderable(fields.get(id)!.fieldType) ? renderMarkdown(value).html : null,
    }));
  if (cleared.length === 0 && set.length === 0) return;

  if (cleared.length)
    await tx.customProfileFieldValue.deleteMany({
      where: { userProfileId: target.id, fieldId: { in: cleared } },
    });
  if (set.length)
    await tx.$executeRaw`
      INSERT INTO custom_profile_field_value (realm_id, user_profile_id, field_id, value, rendered_value)
      SELECT ${realm.id}, ${target.id}, s.field_id, s.value, s.rendered
      FROM unnest(${set.map((s) => s.id)}::int[], ${set.map((s) => s.value)}::text[], ${set.map((s) => s.rendered)}::text[])
        AS s(field_id, value, rendered)
      ON CONFLICT (user_profile_id, field_id)
        DO UPDATE SET value = EXCLUDED.value, rendered_value = EXCLUDED.rendered_value`;

  const audience = await activeUserIds(tx, realm.id);
  const changed = [
    ...cleared.map((id) => ({ id, value: null })),
    ...set.map((s) => ({
      id: s.id,
      value: s.value,
      ...(s.rendered ? { rendered_value: s.rendered } : {}),
    })),
  ];
  for (const field of changed)
    events.add(
      {
        type: "realm_user",
        op: "update",
        person: { user_id: target.id, custom_profile_field: field },
      },
      audience,
    );
  events.invalidate(`user:${target.id}`);
}

/** PATCH /users/me/profile_data (update_user_custom_profile_data). */
export async function doUpdateOwnCustomProfileData(ctx: RequestContext, data: ProfileDataItem[]) {
  humanUsersOnly(ctx.user);
  await inTransaction(ctx, ctx.realm.id, ({ tx, events }) =>
    doUpdateUserCustomProfileData({ tx, events }, ctx.realm, ctx.user, ctx.user, data),
  );
}

/** DELETE /users/me/profile_data (remove_user_custom_profile_data): the same checks, values cleared. */
export async function doRemoveOwnCustomProfileData(ctx: RequestContext, fieldIds: number[]) {
  humanUsersOnly(ctx.user);
  await inTransaction(ctx, ctx.realm.id, ({ tx, events }) =>
    doUpdateUserCustomProfileData(
      { tx, events },
      ctx.realm,
      ctx.user,
      ctx.user,
      fieldIds.map((id) => ({ id, value: null })),
    ),
  );
}
