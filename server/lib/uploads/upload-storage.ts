/**
 * Where stored files live (Zulip's upload backends, zerver/lib/upload/local.py and s3.py): every
 * file the server keeps — message uploads, avatars and custom emoji images — is written, served,
 * read back (by an organization export) and deleted through one UploadStorage, named by its path
 * id (`<realm_id>/<hex>/<random>/<name>`, `avatars/<realm_id>/emoji/images/<file>`).
 *
 * - the local disk (default): the files under `DATA_DIR/uploads/<path id>`, served by this process.
 * - S3-compatible object storage when S3_BUCKET is set (upload-storage-s3.ts): objects keyed by
 *   path id; after its access check the server redirects to a short-lived presigned URL, as
 *   Zulip's serve_s3 does, so that several machines share one store.
 */
import { access, mkdir, open, rename } from "node:fs/promises";
import { dirname, resolve, sep } from "node:path";
import type { Config } from "../../config.ts";
import { removeFile, uploadsRoot } from "./uploads.ts";
import type { UploadStorage } from "./upload-store.ts";

export type { ServeAs, Served, StoredFile, UploadStorage } from "./upload-store.ts";

/** The file of a path id, or null for one that would leave the store. */
export function storedFilePath(config: Pick<Config, "dataDir">, pathId: string): string | null {
  const root = uploadsRoot(config);
  const path = resolve(root, pathId);
  return path.startsWith(root + sep) &&
    !pathId.split("/").some((part) => part === "" || part === "." || part === "..") &&
    !pathId.startsWith(".")
    ? path
    : null;
}

/** The local disk under DATA_DIR: today's layout, files moved in by rename from the incoming directory. */
export function localStorage(config: Pick<Config, "dataDir">): UploadStorage {
  return {
    async put(pathId, file) {
      const target = storedFilePath(config, pathId);
      if (!target) throw new Error(`path id ${pathId} is outside the upload store`);
      await mkdir(dirname(target), { recursive: true });
      await rename(file.path, target);
    },
    async exists(pathId) {
      const path = storedFilePath(config, pathId);
      return (
        path !== null &&
        (await access(path).then(
          () => true,
          () => false,
        ))
      );
    },
    async delete(pathIds) {
      for (const pathId of pathIds) {
        const path = storedFilePath(config, pathId);
        if (path) await removeFile(path);
      }
    },
    async read(pathId) {
      const path = storedFilePath(config, pathId);
      if (!path) return null;
      // Opened once: the size and time are those of the file the stream reads.
      const handle = await open(path, "r").catch((err: NodeJS.ErrnoException) => {
        if (err.code === "ENOENT" || err.code === "ENOTDIR") return null;
        throw err;
      });
      if (!handle) return null;
      try {
        const stat = await handle.stat();
        if (!stat.isFile()) {
          await handle.close();
          return null;
        }
        return { body: handle.createReadStream(), size: stat.size, lastModified: stat.mtime };
      } catch (err) {
        await handle.close();
        throw err;
      }
    },
    serve(pathId) {
      const file = storedFilePath(config, pathId);
      return Promise.resolve(file ? { file } : null);
    },
  };
}

// One store per configuration (a test may run servers of both kinds in one process); the S3
// client is made once and its SDK loaded only when S3 is configured.
const stores = new WeakMap<object, Promise<UploadStorage>>();

export function uploadStorage(config: Pick<Config, "dataDir" | "s3">): Promise<UploadStorage> {
  let store = stores.get(config);
  if (!store) {
    const s3 = config.s3;
    store = s3
      ? import("./upload-storage-s3.ts").then((m) => m.s3Storage(s3))
      : Promise.resolve(localStorage(config));
    store.catch(() => stores.delete(config));
    stores.set(config, store);
  }
  return store;
}
