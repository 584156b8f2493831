/**
 * sharp (libvips, about 30 MiB resident), loaded at the first image a process resizes (an avatar,
 * an uploaded image's thumbnails), never at start-up: most processes never resize one. Its
 * operation cache is off, as Zulip's: each image is read once.
 */
import type { SharpOptions } from "sharp";

let loaded: Promise<typeof import("sharp")> | undefined;

/** A sharp pipeline on these bytes; decoding problems are reported, not fatal (failOn: none). */
export async function sharpOf(data: Buffer, options: SharpOptions = {}) {
  loaded ??= import("sharp").then((m) => {
    m.default.cache(false);
    return m;
  });
  return (await loaded).default(data, { failOn: "none", limitInputPixels: false, ...options });
}
