/**
 * Client devices and E2EE push (zerver/views/devices.py, zerver/actions/push_notifications.py,
 * zerver/lib/push_registration.py, send_e2ee_test_push_notification): registering a device, its
 * push key and token, the token's registration at the bouncer, and the test notification.
 * Each change commits with its `device` event before any request to the bouncer is made.
 */
import type { RequestContext } from "../../context.ts";
import type { PushDevice, Realm } from "../../db/index.ts";
import type { ZulipEvent } from "../../events/log.ts";
import {
  adminActionRequired,
  BouncerNetworkError,
  BouncerRefusedError,
  BouncerServerError,
  bouncerApiError,
  sendToBouncer,
  usesNotificationBouncer,
} from "../../lib/push/push-bouncer.ts";
import { encryptForDevice, tokenIdBase64 } from "../../lib/push/push-devices.ts";
import { realmUrl } from "../../lib/realm/realm.ts";
import { unixSeconds } from "../../lib/time.ts";
import { inTransaction } from "../transaction.ts";

type Ctx = Pick<RequestContext, "db" | "events" | "config" | "log" | "now" | "realm" | "user">;

/** POST /register_client_device: a new device row; Zulip sends no event for it. */
export async function doRegisterClientDevice(ctx: Ctx): Promise<number> {
  return inTransaction(ctx, ctx.realm.id, async ({ tx }) => {
    const device = await tx.pushDevice.create({
      data: { realmId: ctx.realm.id, userProfileId: ctx.user.id },
      select: { id: true },
    });
    return device.id;
  });
}

/**
 * POST /remove_client_device (do_remove_device): the device's row, with its push key and token,
 * goes; the user's clients hear of it.
 */
export async function doRemoveClientDevice(ctx: Ctx, device: PushDevice): Promise<void> {
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    await tx.pushDevice.delete({ where: { id: device.id } });
    events.add({ type: "device", op: "remove", device_id: device.id }, [ctx.user.id]);
  });
}

/** The fields a registration changes, and the `device` event that announces exactly them. */
export interface DeviceChange {
  pushKey?: Uint8Array<ArrayBuffer>;
  pushKeyId?: number;
  tokenKind?: string;
  pendingPushTokenId?: bigint;
  /** A full registration starts over: any earlier refusal is forgotten. */
  clearError?: boolean;
}

/** The bouncer's part of a registration, sent after the device's row committed. */
export interface BouncerRegistration {
  tokenIdB64: string;
  bouncerPublicKey: string;
  encryptedPushRegistration: string;
}

/**
 * Stores a push key and/or a pending token (do_register_push_device, do_rotate_push_key,
 * do_rotate_token) with its `device` event, then registers the token at the bouncer when one
 * was given. The client's request does not wait on the bouncer's verdict in Zulip (a queue
 * worker makes the call); here the call is made after commit, before answering, and its outcome
 * reaches clients as a second `device` event.
 */
export async function doRegisterPushDevice(
  ctx: Ctx,
  device: PushDevice,
  change: DeviceChange,
  registration: BouncerRegistration | undefined,
): Promise<void> {
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const now = ctx.now();
    await tx.pushDevice.update({
      where: { id: device.id },
      data: {
        pushKey: change.pushKey,
        pushKeyId: change.pushKeyId === undefined ? undefined : BigInt(change.pushKeyId),
        tokenKind: change.tokenKind,
        pendingPushTokenId: change.pendingPushTokenId,
        ...(change.pendingPushTokenId !== undefined && { pushTokenLastUpdated: now }),
        ...(change.clearError && { errorCode: null }),
        lastUpdated: now,
      },
    });
    const event: ZulipEvent = { type: "device", op: "update", device_id: device.id };
    if (change.pushKeyId !== undefined) event.push_key_id = change.pushKeyId;
    if (change.pendingPushTokenId !== undefined) {
      event.pending_push_token_id = tokenIdBase64(change.pendingPushTokenId);
      event.push_token_last_updated_timestamp = unixSeconds(now);
    }
    if (change.clearError) event.push_registration_error_code = null;
    events.add(event, [ctx.user.id]);
  });
  if (registration) await registerAtBouncer(ctx, device.id, registration);
}

/**
 * handle_register_push_device_to_bouncer: on success the pending token becomes the device's
 * token (and the bouncer's id for the device is kept, to address notifications); the bouncer's
 * refusal of the registration itself is stored as the device's push_registration_error_code.
 * A network error, a 5xx or a refusal of this server (credentials, plan) leaves the registration
 * pending: Zulip's queue worker retries it; here the client may register again once the attempt
 * is over (see the handler's "already in progress" check).
 */
async function registerAtBouncer(
  ctx: Ctx,
  deviceId: number,
  registration: BouncerRegistration,
): Promise<void> {
  let result: Record<string, unknown>;
  try {
    result = await sendToBouncer(ctx.config, "push/e2ee/register", {
      realm_uuid: ctx.realm.uuid,
      token_id: registration.tokenIdB64,
      encrypted_push_registration: registration.encryptedPushRegistration,
      bouncer_public_key: registration.bouncerPublicKey,
    });
  } catch (error) {
    const errorCode = registrationErrorCode(error);
    if (errorCode === undefined) {
      ctx.log.warn({ deviceId, err: String(error) }, "push device registration to bouncer failed");
      return;
    }
    ctx.log.warn({ deviceId, errorCode }, "push bouncer refused the device registration");
    await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
      await tx.pushDevice.update({ where: { id: deviceId }, data: { errorCode } });
      events.add(
        {
          type: "device",
          op: "update",
          device_id: deviceId,
          push_registration_error_code: errorCode,
        },
        [ctx.user.id],
      );
    });
    return;
  }
  const bouncerDeviceId = typeof result.device_id === "number" ? BigInt(result.device_id) : null;
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    const device = await tx.pushDevice.findUnique({ where: { id: deviceId } });
    // The device may have been rotated again or removed while the bouncer answered.
    if (!device || device.pendingPushTokenId === null) return;
    await tx.pushDevice.update({
      where: { id: deviceId },
      data: {
        pushTokenId: device.pendingPushTokenId,
        pendingPushTokenId: null,
        bouncerDeviceId,
        errorCode: null,
      },
    });
    events.add(
      {
        type: "device",
        op: "update",
        device_id: deviceId,
        push_token_id: tokenIdBase64(device.pendingPushTokenId),
        pending_push_token_id: null,
      },
      [ctx.user.id],
    );
  });
}

/** Codes the bouncer refuses a registration itself with (Device.PushRegistrationErrorCode). */
const REGISTRATION_ERROR_CODES = new Set([
  "INVALID_BOUNCER_PUBLIC_KEY",
  "INVALID_ENCRYPTED_PUSH_REGISTRATION",
  "REQUEST_EXPIRED",
]);

/**
 * What a failed registration leaves on the device: the bouncer's verdict on this registration
 * (a 400; an unexpected one is BAD_REQUEST, as Zulip's JsonableError), or nothing (undefined)
 * when the fault is the connection, the bouncer or this server's own standing there (bad
 * credentials, an unregistered organization, no plan): those are the administrator's to fix
 * and the registration stays pending.
 */
function registrationErrorCode(error: unknown): string | undefined {
  if (error instanceof BouncerNetworkError || error instanceof BouncerServerError) return undefined;
  if (!(error instanceof BouncerRefusedError)) throw error;
  if (error.status !== 400) return undefined;
  if (error.code === "MISSING_REMOTE_REALM" || error.code === "PUSH_NOTIFICATIONS_DISALLOWED")
    return undefined;
  return error.code !== undefined && REGISTRATION_ERROR_CODES.has(error.code)
    ? error.code
    : "BAD_REQUEST";
}

/**
 * POST /mobile_push/e2ee/test_notification after its checks: one encrypted test payload per
 * device (api_docs/mobile-notifications.md "Test push notification"), all in one request to the
 * bouncer, outside any transaction; the bouncer's failures as the API's errors.
 */
export async function doSendE2eeTestNotification(ctx: Ctx, devices: PushDevice[]): Promise<void> {
  if (!usesNotificationBouncer(ctx.config)) throw adminActionRequired();
  const payload = {
    realm_name: ctx.realm.name,
    realm_url: await realmUrl(ctx.db, ctx.realm, ctx.config),
    time: unixSeconds(ctx.now()),
    type: "test",
    user_id: ctx.user.id,
  };
  try {
    await pushToDevices(ctx, ctx.realm, ctx.user.id, devices, payload);
  } catch (error) {
    throw bouncerApiError(error);
  }
}

/**
 * A payload encrypted to each of a user's devices, all in one request to the bouncer's
 * push/e2ee/notify (never inside a transaction: the bouncer may be slow). Devices the bouncer
 * reports as gone (`delete_device_ids`) lose their registration, with a `device` event each.
 * The bouncer's errors are thrown as they are (lib/push/push-bouncer.ts).
 */
export async function pushToDevices(
  deps: Pick<RequestContext, "db" | "events" | "config">,
  realm: Pick<Realm, "id" | "uuid">,
  userId: number,
  devices: PushDevice[],
  payload: object,
): Promise<void> {
  const pushRequests = await Promise.all(
    devices.map(async (device) => {
      const base = {
        device_id: Number(device.bouncerDeviceId),
        payload: {
          push_key_id: Number(device.pushKeyId),
          encrypted_data: await encryptForDevice(device.pushKey!, payload),
        },
      };
      return device.tokenKind === "apns"
        ? { ...base, http_headers: { apns_priority: 10, apns_push_type: "alert" } }
        : { ...base, fcm_priority: "high" };
    }),
  );
  const result = await sendToBouncer(deps.config, "push/e2ee/notify", {
    realm_uuid: realm.uuid,
    push_requests: pushRequests,
  });
  const gone = Array.isArray(result.delete_device_ids)
    ? result.delete_device_ids.filter((id): id is number => Number.isSafeInteger(id))
    : [];
  const goneDevices = devices.filter((d) => gone.includes(Number(d.bouncerDeviceId)));
  if (goneDevices.length === 0) return;
  await inTransaction(deps, realm.id, async ({ tx, events }) => {
    await tx.pushDevice.updateMany({
      where: { id: { in: goneDevices.map((d) => d.id) } },
      data: { pushTokenId: null, bouncerDeviceId: null },
    });
    for (const d of goneDevices)
      events.add({ type: "device", op: "update", device_id: d.id, push_token_id: null }, [userId]);
  });
}
