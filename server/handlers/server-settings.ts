import { DEFAULT_REALM_ICON, realmIconUrl, resolveRealm, realmUrl } from "../lib/realm/realm.ts";
import type { Handler } from "../http/types.ts";
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from "../version.ts";

/** GET /server_settings: what a client needs before it logs in (zerver/views/auth.py). */
export const getServerSettings: Handler<"get-server-settings"> = async (_input, ctx) => {
  const realm = await resolveRealm(ctx.db, ctx.host);
  const passwordAuth = realm?.passwordAuthEnabled ?? true;
  const url = realm
    ? await realmUrl(ctx.db, realm, ctx.config)
    : `http://${ctx.config.externalHost}`;
  return {
    authentication_methods: {
      password: passwordAuth,
      dev: false,
      email: passwordAuth,
      ldap: false,
      saml: false,
      google: false,
      github: false,
      gitlab: false,
      apple: false,
      azuread: false,
      remoteuser: false,
      "openid connect": false,
      // Feature level 488; no external method is offered, so none is in the list below either.
      discord: false,
    },
    external_authentication_methods: [],
    zulip_feature_level: ZULIP_FEATURE_LEVEL,
    zulip_version: ZULIP_VERSION,
    zulip_merge_base: ZULIP_MERGE_BASE,
    push_notifications_enabled: false,
    is_incompatible: false,
    email_auth_enabled: passwordAuth,
    require_email_format_usernames: true,
    realm_url: url,
    realm_uri: url,
    realm_name: realm?.name ?? "",
    realm_icon: realm ? realmIconUrl(realm) : DEFAULT_REALM_ICON,
    realm_description: realm?.renderedDescription ?? "",
    realm_web_public_access_enabled: realm?.enableSpectatorAccess ?? false,
  };
};
