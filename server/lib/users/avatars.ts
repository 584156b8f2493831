/**
 * Uploaded avatars (Zulip's zerver/lib/upload: upload_avatar_image, and the /user_avatars/ URLs):
 * which images are accepted, and where they are stored. The URL is lib/users/users.ts avatarUrl.
 */
import { JsonableError } from "../../errors.ts";

/** The image types an avatar may be, by content type, with the extension its file gets. */
const AVATAR_IMAGE_TYPES: Record<string, string> = {
  "image/png": ".png",
  "image/jpeg": ".jpg",
  "image/gif": ".gif",
  "image/webp": ".webp",
};

/** The content types of those extensions, for serving. */
export const AVATAR_CONTENT_TYPES: Record<string, string> = Object.fromEntries(
  Object.entries(AVATAR_IMAGE_TYPES).map(([type, ext]) => [ext, type]),
);

/** The uploaded file's extension by its content type; another type is "Invalid image format". */
export function avatarExtension(contentType: string): string {
  const ext = AVATAR_IMAGE_TYPES[contentType.split(";")[0]!.trim().toLowerCase()];
  if (!ext) throw new JsonableError("Invalid image format");
  return ext;
}

/** The store's path id of an avatar file (its hash: random hex, then the extension). */
export const avatarPathId = (realmId: number, avatarHash: string) =>
  `avatars/${realmId}/${avatarHash}`;
