import { doUpdateRealm } from "../actions/realm/realm.ts";
import { OrganizationAdministratorRequiredError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { isRealmAdmin } from "../lib/users/users.ts";

/** PATCH /realm (zerver/views/realm.py update_realm): administrators only. */
export const updateRealm: Handler<"update-realm"> = async ({ body }, ctx) => {
  if (!isRealmAdmin(ctx.user)) throw new OrganizationAdministratorRequiredError();
  return doUpdateRealm(ctx, body);
};
