/**
 * A user's client devices and their E2EE push registration (zerver/lib/devices.py,
 * zerver/lib/push_registration.py): the register state, the checks of POST /mobile_push/register,
 * and the encryption of a notification to a device's push key.
 */
import sodium from "libsodium-wrappers";
import type { Db, PushDevice } from "../../db/index.ts";
import { JsonableError } from "../../errors.ts";
import { isStorableId } from "../ids.ts";
import { unixSeconds } from "../time.ts";

/** The first byte of a push key: the cryptosystem, here NaCl's XSalsa20-Poly1305 secretbox. */
const SECRETBOX_PREFIX = 0x31;

/** One entry of register's `devices` and of `device` events (Zulip's DeviceInfoDict). */
export interface DeviceInfo {
  push_key_id: number | null;
  push_token_id: string | null;
  pending_push_token_id: string | null;
  push_token_last_updated_timestamp: number | null;
  push_registration_error_code: string | null;
}

/** A token id as the API shows it: its 8 bytes, big-endian two's complement, in base64. */
export function tokenIdBase64(tokenId: bigint): string {
  const bytes = Buffer.alloc(8);
  bytes.writeBigInt64BE(tokenId);
  return bytes.toString("base64");
}

/** `token_id` from the client: base64 of at most 8 bytes, read as a signed big-endian integer. */
export function checkTokenId(tokenIdB64: string): bigint {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(tokenIdB64))
    throw new JsonableError("`token_id` is not Base64 encoded");
  const bytes = Buffer.from(tokenIdB64, "base64");
  // Zulip stores it in a 64-bit column; a longer one could not be stored.
  if (bytes.length === 0 || bytes.length > 8) throw new JsonableError("Invalid `token_id`");
  return BigInt.asIntN(bytes.length * 8, BigInt(`0x${bytes.toString("hex")}`));
}

/** `push_key`: base64 of the 0x31 prefix and a 32-byte secretbox key (check_push_key). */
export function checkPushKey(pushKeyB64: string): Uint8Array<ArrayBuffer> {
  const bytes = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(pushKeyB64)
    ? Buffer.from(pushKeyB64, "base64")
    : undefined;
  if (!bytes || bytes.length !== 33 || bytes[0] !== SECRETBOX_PREFIX)
    throw new JsonableError("Invalid `push_key`");
  return new Uint8Array(bytes);
}

/** Whether a device already has this push key. */
export const samePushKey = (stored: Uint8Array | null, key: Uint8Array) =>
  stored !== null && Buffer.from(stored).equals(key);

/** The caller's own device, or Zulip's "Invalid `device_id`" (check_device_id). */
export async function checkDeviceId(db: Db, deviceId: number, userId: number): Promise<PushDevice> {
  const device = isStorableId(deviceId)
    ? await db.pushDevice.findFirst({ where: { id: deviceId, userProfileId: userId } })
    : null;
  if (!device) throw new JsonableError("Invalid `device_id`");
  return device;
}

/**
 * The user's devices registered at the bouncer (a push token id), or the one named: those a
 * notification can reach. An id past the 32-bit column names no device.
 */
export async function registeredDevices(
  db: Db,
  userId: number,
  deviceId: number | undefined,
): Promise<PushDevice[]> {
  if (deviceId !== undefined && !isStorableId(deviceId)) return [];
  return db.pushDevice.findMany({
    where: {
      userProfileId: userId,
      pushTokenId: { not: null },
      ...(deviceId !== undefined && { id: deviceId }),
    },
    orderBy: { id: "asc" },
  });
}

export function deviceInfo(device: PushDevice): DeviceInfo {
  return {
    push_key_id: device.pushKeyId === null ? null : Number(device.pushKeyId),
    push_token_id: device.pushTokenId === null ? null : tokenIdBase64(device.pushTokenId),
    pending_push_token_id:
      device.pendingPushTokenId === null ? null : tokenIdBase64(device.pendingPushTokenId),
    push_token_last_updated_timestamp:
      device.pushTokenLastUpdated === null ? null : unixSeconds(device.pushTokenLastUpdated),
    push_registration_error_code: device.errorCode,
  };
}

/** register's `devices`: the user's devices by id (get_devices), in one statement. */
export async function userDevices(db: Db, userId: number): Promise<Record<string, DeviceInfo>> {
  const devices = await db.pushDevice.findMany({
    where: { userProfileId: userId },
    orderBy: { id: "asc" },
  });
  return Object.fromEntries(devices.map((d) => [String(d.id), deviceInfo(d)]));
}

/**
 * A notification's JSON encrypted to a device's push key as Zulip's E2EE protocol does (PyNaCl's
 * SecretBox.encrypt): a random 24-byte nonce followed by the secretbox ciphertext, in base64.
 */
export async function encryptForDevice(pushKey: Uint8Array, payload: object): Promise<string> {
  await sodium.ready;
  const key = pushKey.subarray(1);
  const nonce = sodium.randombytes_buf(sodium.crypto_secretbox_NONCEBYTES);
  const box = sodium.crypto_secretbox_easy(JSON.stringify(payload), nonce, key);
  return Buffer.concat([nonce, box]).toString("base64");
}
