/**
 * A second organization on the test server's database, with its owner: what the tests of
 * isolation between organizations (the fuzzer, the authorization and read-path matrices) call
 * with the other organization's Host and key.
 */
import { doCreateRealm } from "../../server/actions/realm/realm.ts";
import { doCreateUser } from "../../server/actions/users/users.ts";
import { INTERNAL_BOTS } from "../../server/lib/users/internal-bots.ts";
import { Role } from "../../server/lib/users/users.ts";
import type { TestServer } from "./server.ts";

export interface OtherOrg {
  id: number;
  email: string;
  apiKey: string;
  /** The organization's Host header: `<stringId>.<EXTERNAL_HOST>`. */
  host: string;
}

export async function createOtherOrg(
  server: TestServer,
  options: { name?: string; stringId?: string; email?: string } = {},
): Promise<OtherOrg> {
  const { name = "Other Org", stringId = "otherorg" } = options;
  const email = options.email ?? `owner@${stringId}.example`;
  const host = `${stringId}.${server.deps.config.externalHost}`;
  const owner = await server.db.$transaction(async (tx) => {
    const realm = await doCreateRealm(tx, { name, stringId });
    // Every organization has its internal bots, as doCreateOrganization makes them.
    for (const bot of INTERNAL_BOTS) await doCreateUser(tx, realm, bot, host);
    return doCreateUser(
      tx,
      realm,
      { email, fullName: `${name} Owner`, role: Role.OWNER, passwordHash: null },
      host,
    );
  });
  return { id: owner.id, email: owner.email, apiKey: owner.apiKey, host };
}
