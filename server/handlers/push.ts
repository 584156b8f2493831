/**
 * Client devices and E2EE mobile push (zerver/views/devices.py register_device,
 * zerver/views/push_notifications.py register_push_device and
 * send_e2ee_test_push_notification_api), and the legacy tokens (add_apns_device_token,
 * add_android_reg_id, remove_*, send_test_push_notification_api), with Zulip's checks in
 * Zulip's order.
 */
import {
  doRegisterClientDevice,
  doRegisterPushDevice,
  doRemoveClientDevice,
  doSendE2eeTestNotification,
  type DeviceChange,
} from "../actions/push/push-devices.ts";
import {
  doAddPushDeviceToken,
  doRemovePushDeviceToken,
  doSendTestPushNotification,
} from "../actions/push/push-tokens.ts";
import { JsonableError } from "../errors.ts";
import type { Handler } from "../http/types.ts";
import { pushServiceNotConfigured, usesNotificationBouncer } from "../lib/push/push-bouncer.ts";
import {
  checkDeviceId,
  checkPushKey,
  checkTokenId,
  registeredDevices,
  samePushKey,
} from "../lib/push/push-devices.ts";
import {
  checkAppId,
  testNotificationTokens,
  TokenKind,
  validateToken,
} from "../lib/push/push-tokens.ts";
import { humanUsersOnly } from "../lib/users/users.ts";

/** POST /register_client_device. */
export const registerClientDevice: Handler<"register-client-device"> = async (_req, ctx) => ({
  device_id: await doRegisterClientDevice(ctx),
});

/** POST /remove_client_device: the caller's own device only (check_device_id). */
export const removeClientDevice: Handler<"remove-client-device"> = async ({ body }, ctx) => {
  await doRemoveClientDevice(ctx, await checkDeviceId(ctx.db, body.device_id, ctx.user.id));
  return {};
};

/**
 * POST /mobile_push/register: push key fields (`push_key`, `push_key_id`), token fields
 * (`token_kind`, `token_id`, `bouncer_public_key`, `encrypted_push_registration`), or both.
 */
export const registerPushDevice: Handler<"register-push-device"> = async ({ body }, ctx) => {
  humanUsersOnly(ctx.user);
  if (!usesNotificationBouncer(ctx.config)) throw pushServiceNotConfigured();
  const device = await checkDeviceId(ctx.db, body.device_id, ctx.user.id);

  const keyFields = body.push_key !== undefined && body.push_key_id !== undefined;
  const tokenFields =
    body.bouncer_public_key !== undefined &&
    body.encrypted_push_registration !== undefined &&
    body.token_id !== undefined &&
    body.token_kind !== undefined;
  if (!keyFields && !tokenFields)
    throw new JsonableError(
      "Missing parameters: must provide either all push key fields, all token fields, or both.",
    );

  if (keyFields && !tokenFields) {
    if (device.pushKeyId === null)
      throw new JsonableError("No push registration exists to rotate key for.");
    const pushKey = checkPushKey(body.push_key!);
    // do_rotate_push_key: the same key again changes nothing and announces nothing.
    if (Number(device.pushKeyId) === body.push_key_id && samePushKey(device.pushKey, pushKey))
      return {};
    await doRegisterPushDevice(ctx, device, { pushKey, pushKeyId: body.push_key_id }, undefined);
    return {};
  }

  // One registration at a time while the bouncer's answer to the pending one may still come:
  // the request that made it waits at most the bouncer timeout. (Zulip's queue worker retries a
  // failed attempt; here, once that time is over, the client's new request is the retry.)
  if (
    device.errorCode === null &&
    device.pendingPushTokenId !== null &&
    device.pushTokenLastUpdated !== null &&
    ctx.now().getTime() - device.pushTokenLastUpdated.getTime() < ctx.config.pushBouncerTimeoutMs
  )
    throw new JsonableError("A registration for the device already in progress.");

  const tokenId = checkTokenId(body.token_id!);
  const registration = {
    tokenIdB64: body.token_id!,
    bouncerPublicKey: body.bouncer_public_key!,
    encryptedPushRegistration: body.encrypted_push_registration!,
  };
  let change: DeviceChange;
  if (!keyFields) {
    if (device.pushKeyId === null)
      throw new JsonableError("No push registration exists to rotate token for.");
    if (device.errorCode === null && device.pushTokenId === tokenId) return {};
    change = { pendingPushTokenId: tokenId };
  } else {
    const pushKey = checkPushKey(body.push_key!);
    const unchanged =
      device.errorCode === null &&
      Number(device.pushKeyId) === body.push_key_id &&
      samePushKey(device.pushKey, pushKey) &&
      device.pushTokenId === tokenId &&
      device.tokenKind === body.token_kind;
    if (unchanged) return {};
    change = {
      pushKey,
      pushKeyId: body.push_key_id,
      tokenKind: body.token_kind,
      pendingPushTokenId: tokenId,
      clearError: true,
    };
  }
  await doRegisterPushDevice(ctx, device, change, registration);
  return {};
};

/**
 * POST /mobile_push/e2ee/test_notification: to the given device, or to all of the caller's
 * devices, as long as they are registered at the bouncer (a push token id).
 */
export const e2eeTestNotify: Handler<"e2ee-test-notify"> = async ({ body }, ctx) => {
  humanUsersOnly(ctx.user);
  const devices = await registeredDevices(ctx.db, ctx.user.id, body?.device_id);
  if (devices.length === 0)
    throw new JsonableError("No active registered push device", { code: "NO_ACTIVE_PUSH_DEVICE" });
  await doSendE2eeTestNotification(ctx, devices);
  return {};
};

/** POST /users/me/apns_device_token. */
export const addApnsToken: Handler<"add-apns-token"> = async ({ body }, ctx) => {
  humanUsersOnly(ctx.user);
  const appId = checkAppId(body.appid);
  validateToken(body.token, TokenKind.APNS);
  await doAddPushDeviceToken(ctx, body.token, TokenKind.APNS, appId);
  return {};
};

/** DELETE /users/me/apns_device_token. */
export const removeApnsToken: Handler<"remove-apns-token"> = async ({ body }, ctx) => {
  humanUsersOnly(ctx.user);
  validateToken(body.token, TokenKind.APNS);
  await doRemovePushDeviceToken(ctx, body.token, TokenKind.APNS);
  return {};
};

/** POST /users/me/android_gcm_reg_id. */
export const addFcmToken: Handler<"add-fcm-token"> = async ({ body }, ctx) => {
  humanUsersOnly(ctx.user);
  validateToken(body.token, TokenKind.FCM);
  await doAddPushDeviceToken(ctx, body.token, TokenKind.FCM, null);
  return {};
};

/** DELETE /users/me/android_gcm_reg_id. */
export const removeFcmToken: Handler<"remove-fcm-token"> = async ({ body }, ctx) => {
  humanUsersOnly(ctx.user);
  validateToken(body.token, TokenKind.FCM);
  await doRemovePushDeviceToken(ctx, body.token, TokenKind.FCM);
  return {};
};

/** POST /mobile_push/test_notification: to the token named, or to every legacy token. */
export const testNotify: Handler<"test-notify"> = async ({ body }, ctx) => {
  humanUsersOnly(ctx.user);
  doSendTestPushNotification(ctx, await testNotificationTokens(ctx.db, ctx.user.id, body?.token));
  return {};
};
