/**
 * Thumbnails of uploaded images (Zulip's zerver/lib/thumbnail.py and ImageAttachment): which
 * formats are made, how, where they are stored, and what Markdown needs to show them.
 *
 * An upload whose declared type is an image this server thumbnails gets, if its header decodes
 * within Zulip's pixel limits, an `image_attachment` row (its dimensions as shown, frames,
 * content type) and one thumbnail per format of THUMBNAIL_OUTPUT_FORMATS (the animated ones only
 * for an animated image), each stored through the upload store under
 * `thumbnail/<path_id>/<format name>` and served by /user_uploads/thumbnail/… Anything else gets
 * no row and so no preview.
 *
 * Zulip makes the thumbnails in a worker and re-renders the messages that show a spinner until
 * then (update_message with rendering_only); here they are made in the upload request, so that a
 * message always renders its final HTML at once and never needs re-rendering.
 */
import type { Db } from "../../db/index.ts";
import { sharpOf } from "../sharp.ts";

export interface ThumbnailFormat {
  extension: string;
  maxWidth: number;
  maxHeight: number;
  animated: boolean;
}

/** A thumbnail as recorded in image_attachment.thumbnail_metadata (Zulip's StoredThumbnailFormat). */
export interface StoredThumbnail {
  extension: string;
  max_width: number;
  max_height: number;
  animated: boolean;
  content_type: string;
  width: number;
  height: number;
  byte_size: number;
}

/**
 * The formats made (Zulip's THUMBNAIL_OUTPUT_FORMATS): large enough that clients which do not
 * choose a format show something not pixelated. The first animated and the first still one are
 * those written into rendered messages.
 */
export const THUMBNAIL_OUTPUT_FORMATS: readonly ThumbnailFormat[] = [
  { extension: "webp", maxWidth: 840, maxHeight: 560, animated: true },
  { extension: "webp", maxWidth: 840, maxHeight: 560, animated: false },
];

const CONTENT_TYPES: Record<string, string> = { webp: "image/webp" };

/**
 * The types thumbnailed: Zulip's THUMBNAIL_ACCEPT_IMAGE_TYPES that browsers show as they are.
 * HEIC, TIFF, AVIF and SVG, which Zulip also transcodes into a large extra thumbnail
 * (TRANSCODED_IMAGE_FORMAT), are not thumbnailed here. The declared type decides whether the
 * bytes are read at all; decoding decides the rest.
 */
const THUMBNAILED_TYPES = new Set(["image/gif", "image/jpeg", "image/png", "image/webp"]);

const baseType = (contentType: string) => contentType.split(";")[0]!.trim().toLowerCase();

/** Whether an upload of this declared type is read for thumbnails at all. */
export const isThumbnailedType = (contentType: string) =>
  THUMBNAILED_TYPES.has(baseType(contentType));

/** Zulip's limits: no image of more pixels (IMAGE_BOMB_TOTAL_PIXELS), nor animations of more over 3 frames. */
const IMAGE_BOMB_TOTAL_PIXELS = 90_000_000;
const IMAGE_MAX_ANIMATED_PIXELS = IMAGE_BOMB_TOTAL_PIXELS / 3;

/** A format's file name and URL component: `840x560.webp`, `840x560-anim.webp`. */
export const formatName = (f: ThumbnailFormat) =>
  `${f.maxWidth}x${f.maxHeight}${f.animated ? "-anim" : ""}.${f.extension}`;

/** The stored path of a thumbnail of an upload (Zulip's get_image_thumbnail_path). */
export const thumbnailPathId = (pathId: string, name: string) => `thumbnail/${pathId}/${name}`;

/** Every thumbnail an upload may have, for deleting them with it (one never made is no error). */
export const thumbnailPathIds = (pathIds: string[]) =>
  pathIds.flatMap((p) => THUMBNAIL_OUTPUT_FORMATS.map((f) => thumbnailPathId(p, formatName(f))));

/** `server_thumbnail_formats` of the register response. */
export const serverThumbnailFormats = () =>
  THUMBNAIL_OUTPUT_FORMATS.map((f) => ({
    name: formatName(f),
    max_width: f.maxWidth,
    max_height: f.maxHeight,
    format: f.extension,
    animated: f.animated,
  }));

export interface ImageThumbnails {
  width: number;
  height: number;
  frames: number;
  contentType: string;
  thumbnails: { name: string; data: Buffer; stored: StoredThumbnail }[];
}

/**
 * The facts and thumbnails of an uploaded image, or null for a file that is no image this server
 * thumbnails: another declared type, a header that does not decode, or too many pixels (Zulip's
 * maybe_thumbnail with libvips_check_image, then its thumbnail worker). Nothing is stored here.
 */
export async function makeThumbnails(
  data: Buffer,
  contentType: string,
): Promise<ImageThumbnails | null> {
  if (!isThumbnailedType(contentType)) return null;
  const type = baseType(contentType);
  try {
    const meta = await (await sharpOf(data)).metadata();
    const frames = meta.pages ?? 1;
    if (!meta.width || !meta.height) return null;
    // An animation must show at least 3 frames within a third of the budget.
    const pixels = meta.width * meta.height;
    if (frames === 1 && pixels > IMAGE_BOMB_TOTAL_PIXELS) return null;
    if (frames > 1 && pixels * Math.min(3, frames) > IMAGE_MAX_ANIMATED_PIXELS) return null;
    // The dimensions as shown: EXIF orientations 5 to 8 turn the image a quarter.
    const turned = (meta.orientation ?? 1) >= 5 && (meta.orientation ?? 1) <= 8;
    const [width, height] = turned ? [meta.height, meta.width] : [meta.width, meta.height];
    const thumbnails: ImageThumbnails["thumbnails"] = [];
    for (const f of THUMBNAIL_OUTPUT_FORMATS) {
      if (f.animated && frames === 1) continue; // no -anim version of a still image
      // The still version of an animation is its first frame; shrunk only, never enlarged.
      const { data: out, info } = await (
        await sharpOf(data, { animated: f.animated })
      )
        .autoOrient()
        .resize(f.maxWidth, f.maxHeight, { fit: "inside", withoutEnlargement: true })
        .toFormat(f.extension as "webp")
        .toBuffer({ resolveWithObject: true });
      thumbnails.push({
        name: formatName(f),
        data: out,
        stored: {
          extension: f.extension,
          max_width: f.maxWidth,
          max_height: f.maxHeight,
          animated: f.animated,
          content_type: CONTENT_TYPES[f.extension]!,
          width: info.width,
          height: info.pageHeight ?? info.height,
          byte_size: out.length,
        },
      });
    }
    return { width, height, frames, contentType: type, thumbnails };
  } catch {
    // Not decodable, or truncated: no thumbnail, as Zulip's BadImageError there.
    return null;
  }
}

/** What rendering a link to an uploaded image needs (Zulip's MarkdownImageMetadata). */
export interface UploadPreview {
  /** The default thumbnail's URL, or null while none is stored (a spinner in Zulip). */
  url: string | null;
  animated: boolean;
  width: number;
  height: number;
  contentType: string | null;
}

/**
 * The previews of the uploads these path ids name, in one statement (Zulip's
 * get_user_upload_previews): only images with an image_attachment row; the default thumbnail is
 * the first of THUMBNAIL_OUTPUT_FORMATS matching whether the image is animated.
 */
export async function uploadPreviews(
  db: Db,
  realmId: number,
  pathIds: string[],
): Promise<Map<string, UploadPreview>> {
  const found = new Map<string, UploadPreview>();
  if (pathIds.length === 0) return found;
  const rows = await db.$queryRaw<
    {
      pathId: string;
      width: number;
      height: number;
      frames: number;
      contentType: string | null;
      thumbnails: StoredThumbnail[];
    }[]
  >`SELECT path_id AS "pathId", original_width_px AS width, original_height_px AS height, frames,
      content_type AS "contentType", thumbnail_metadata AS thumbnails
    FROM image_attachment WHERE realm_id = ${realmId} AND path_id = ANY (${pathIds}::text[])`;
  for (const row of rows) {
    const animated = row.frames > 1;
    const format =
      THUMBNAIL_OUTPUT_FORMATS.find((f) => f.animated === animated) ?? THUMBNAIL_OUTPUT_FORMATS[0]!;
    found.set(row.pathId, {
      url:
        row.thumbnails.length > 0
          ? `/user_uploads/${thumbnailPathId(row.pathId, formatName(format))}`
          : null,
      animated: format.animated,
      width: row.width,
      height: row.height,
      contentType: row.contentType,
    });
  }
  return found;
}

/** Records an image's facts and thumbnails (in the upload's transaction). */
export async function insertImageAttachment(
  tx: Pick<Db, "$executeRaw">,
  realmId: number,
  pathId: string,
  image: ImageThumbnails,
): Promise<void> {
  const metadata = JSON.stringify(image.thumbnails.map((t) => t.stored));
  await tx.$executeRaw`
    INSERT INTO image_attachment (realm_id, path_id, original_width_px, original_height_px, frames, thumbnail_metadata, content_type)
    VALUES (${realmId}, ${pathId}, ${image.width}, ${image.height}, ${image.frames}, ${metadata}::jsonb, ${image.contentType})`;
}

/**
 * A stored thumbnail of an image the caller may already see, by its format's name: its content
 * type, or null when the image has none of that name (Zulip's serve_file for thumbnails).
 */
export async function storedThumbnail(
  db: Db,
  pathId: string,
  name: string,
): Promise<StoredThumbnail | null> {
  const [row] = await db.$queryRaw<{ thumbnails: StoredThumbnail[] }[]>`
    SELECT thumbnail_metadata AS thumbnails FROM image_attachment WHERE path_id = ${pathId}`;
  return (
    row?.thumbnails.find(
      (t) =>
        formatName({
          extension: t.extension,
          maxWidth: t.max_width,
          maxHeight: t.max_height,
          animated: t.animated,
        }) === name,
    ) ?? null
  );
}

/** Deletes the rows of images whose attachments are gone (their files go through the store). */
export const deleteImageAttachments = (tx: Pick<Db, "$executeRaw">, pathIds: string[]) =>
  pathIds.length
    ? tx.$executeRaw`DELETE FROM image_attachment WHERE path_id = ANY (${pathIds}::text[])`
    : Promise.resolve(0);
