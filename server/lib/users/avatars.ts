/**
 * Uploaded avatars (Zulip's zerver/lib/upload: upload_avatar_image and write_avatar_images,
 * zerver/lib/thumbnail.py resize_avatar, and the /user_avatars/ URLs): which images are accepted,
 * how they are resized, and where they are stored. The URL is lib/users/users.ts avatarUrl.
 *
 * An upload is kept three times under one random name: `<hash>.original` (the bytes as
 * uploaded), `<hash>.png` (DEFAULT_AVATAR_SIZE, 100×100) and `<hash>-medium.png`
 * (MEDIUM_AVATAR_SIZE, 500×500), both PNG, cut square from the middle of the image and scaled up
 * or down to fill it, as libvips' thumbnail with crop=centre does in Zulip. An animated image
 * becomes its first frame, as in Zulip (its avatars are always PNG stills).
 *
 * Avatars uploaded before resizing existed are stored as `<hash>.<ext>` with their original
 * bytes and no medium file; they are still served (the medium URL by the same file).
 */
import type { Metadata } from "sharp";
import { JsonableError } from "../../errors.ts";
import { sharpOf } from "../sharp.ts";

export const DEFAULT_AVATAR_SIZE = 100;
export const MEDIUM_AVATAR_SIZE = 500;

/** Zulip refuses any image with more pixels than this, over all its frames (IMAGE_BOMB_TOTAL_PIXELS). */
export const IMAGE_BOMB_TOTAL_PIXELS = 90_000_000;

/** The types an avatar may be (Zulip's THUMBNAIL_ACCEPT_IMAGE_TYPES); decoding decides the rest. */
const AVATAR_IMAGE_TYPES = new Set([
  "image/avif",
  "image/gif",
  "image/heic",
  "image/jpeg",
  "image/png",
  "image/tiff",
  "image/webp",
  "image/svg+xml",
]);

/** The types of the files served under /user_avatars/ by their extension (older uploads kept theirs). */
export const AVATAR_CONTENT_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};

/** Zulip's BadImageError: a JsonableError with the code BAD_IMAGE. */
export class BadImageError extends JsonableError {
  constructor(msg: string) {
    super(msg, { code: "BAD_IMAGE" });
  }
}

/** Refuses an upload whose declared type is not an image Zulip would decode ("Invalid image format"). */
export function checkAvatarType(contentType: string): void {
  if (!AVATAR_IMAGE_TYPES.has(contentType.split(";")[0]!.trim().toLowerCase()))
    throw new BadImageError("Invalid image format");
}

/**
 * Zulip's libvips_check_image: the image's header decodes, and its pixels over all frames stay
 * within IMAGE_BOMB_TOTAL_PIXELS. Reads only the header.
 */
async function checkImage(data: Buffer): Promise<void> {
  let meta: Metadata;
  try {
    meta = await (await sharpOf(data)).metadata();
  } catch {
    throw new BadImageError("Could not decode image; did you upload an image file?");
  }
  if (!meta.width || !meta.height)
    throw new BadImageError("Could not decode image; did you upload an image file?");
  if (meta.width * meta.height * (meta.pages ?? 1) > IMAGE_BOMB_TOTAL_PIXELS)
    throw new BadImageError("Image size exceeds limit.");
}

/**
 * Zulip's resize_avatar: a `size`×`size` PNG cut from the middle of the image (turned upright by
 * its EXIF orientation) and scaled to fill the square, up or down; the first frame of an
 * animation.
 */
async function resizeAvatar(data: Buffer, size: number): Promise<Buffer> {
  try {
    return await (
      await sharpOf(data)
    )
      .autoOrient()
      .resize(size, size, { fit: "cover", position: "centre" })
      .png()
      .toBuffer();
  } catch {
    throw new BadImageError("Image is corrupted or truncated");
  }
}

/** The avatar's two sizes, after the checks Zulip makes; nothing is stored here. */
export async function avatarImages(data: Buffer): Promise<{ small: Buffer; medium: Buffer }> {
  await checkImage(data);
  return {
    small: await resizeAvatar(data, DEFAULT_AVATAR_SIZE),
    medium: await resizeAvatar(data, MEDIUM_AVATAR_SIZE),
  };
}

/** The store's path id of an avatar file (its hash: random hex, then `.png` or an older extension). */
export const avatarPathId = (realmId: number, avatarHash: string) =>
  `avatars/${realmId}/${avatarHash}`;

/** The path id of an avatar's medium size (none was stored for uploads older than resizing). */
export const mediumAvatarPathId = (realmId: number, avatarHash: string) =>
  avatarPathId(realmId, avatarHash.replace(/(\.[a-z]+)$/, "-medium$1"));

/** The path id of the avatar as uploaded (Zulip's `.original`). */
export const originalAvatarPathId = (realmId: number, avatarHash: string) =>
  avatarPathId(realmId, avatarHash.replace(/(\.[a-z]+)$/, ".original"));

/** Every file an avatar may have (those of older uploads that were never written are no error to delete). */
export const avatarPathIds = (realmId: number, avatarHash: string) => [
  avatarPathId(realmId, avatarHash),
  mediumAvatarPathId(realmId, avatarHash),
  originalAvatarPathId(realmId, avatarHash),
];
