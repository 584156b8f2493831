/**
 * The upload store in an S3-compatible bucket (Zulip's zerver/lib/upload/s3.py), through
 * @aws-sdk/client-s3. Loaded only when S3_BUCKET is set (lib/uploads/upload-storage.ts), and the SDK
 * with it: it costs memory and warns about Node's version when it loads.
 *
 * Objects are keyed by path id and keep their content type. Serving redirects to a presigned GET
 * URL valid for SIGNED_UPLOAD_URL_SECONDS, whose response headers (type, disposition, caching)
 * are the ones a local file is sent with.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable } from "node:stream";
import type { S3Config } from "../../config.ts";
import type { UploadStorage } from "./upload-store.ts";
import { removeFile } from "./uploads.ts";

/** How long a redirect's presigned URL works (Zulip's SIGNED_UPLOAD_URL_DURATION). */
export const SIGNED_UPLOAD_URL_SECONDS = 60;
/** DeleteObjects takes at most 1000 keys. */
const DELETE_BATCH = 1000;

export async function s3Storage(config: S3Config): Promise<UploadStorage> {
  const { S3Client, PutObjectCommand, HeadObjectCommand, DeleteObjectsCommand, GetObjectCommand } =
    await import("@aws-sdk/client-s3");
  const { getSignedUrl } = await import("@aws-sdk/s3-request-presigner");
  const client = new S3Client({
    region: config.region,
    endpoint: config.endpointUrl,
    forcePathStyle: config.addressingStyle === "path" ? true : undefined,
    credentials:
      config.key !== undefined
        ? { accessKeyId: config.key, secretAccessKey: config.secretKey! }
        : undefined,
    // Checksums only where S3 requires them (Zulip's S3_SKIP_CHECKSUM): the SDK's default
    // trailing checksums are unknown to many S3-compatible servers.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  const Bucket = config.bucket;

  return {
    async put(pathId, file) {
      const { size } = await stat(file.path);
      await client.send(
        new PutObjectCommand({
          Bucket,
          Key: pathId,
          Body: createReadStream(file.path),
          ContentLength: size,
          ContentType: file.contentType,
        }),
      );
      await removeFile(file.path);
    },
    async exists(pathId) {
      try {
        await client.send(new HeadObjectCommand({ Bucket, Key: pathId }));
        return true;
      } catch (err) {
        if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
          return false;
        throw err;
      }
    },
    async delete(pathIds) {
      for (let i = 0; i < pathIds.length; i += DELETE_BATCH) {
        const keys = pathIds.slice(i, i + DELETE_BATCH).map((Key) => ({ Key }));
        const { Errors } = await client.send(
          new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys, Quiet: true } }),
        );
        if (Errors?.length)
          throw new Error(`S3 DeleteObjects: ${Errors[0]!.Key}: ${Errors[0]!.Message}`);
      }
    },
    async read(pathId) {
      try {
        const { Body, ContentLength, LastModified } = await client.send(
          new GetObjectCommand({ Bucket, Key: pathId }),
        );
        // In Node the SDK's body is an IncomingMessage: a Readable already, streamed as it arrives.
        if (!(Body instanceof Readable)) throw new Error(`S3 GetObject ${pathId}: no body stream`);
        return { body: Body, size: ContentLength ?? 0, lastModified: LastModified ?? new Date(0) };
      } catch (err) {
        const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata
          ?.httpStatusCode;
        if (status === 404 || (err as { name?: string }).name === "NoSuchKey") return null;
        throw err;
      }
    },
    async serve(pathId, as) {
      const command = new GetObjectCommand({
        Bucket,
        Key: pathId,
        ResponseContentType: as.contentType,
        ResponseContentDisposition: as.contentDisposition,
        ResponseCacheControl: as.cacheControl,
      });
      return {
        redirect: await getSignedUrl(client, command, { expiresIn: SIGNED_UPLOAD_URL_SECONDS }),
      };
    },
  };
}
