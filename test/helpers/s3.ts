/**
 * A real S3-compatible server on loopback for the upload store's tests: s3rver in this process,
 * on an ephemeral port, keeping its objects in a temporary directory, with the bucket created
 * through the SDK as an operator would.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import S3rver from "s3rver";
import type { S3Config } from "../../server/config.ts";

export interface TestS3 {
  /** The server's S3 settings (S3_BUCKET, S3_ENDPOINT_URL, …) for this bucket. */
  config: S3Config;
  /** The object's bytes, or null when the bucket has no such key (HeadObject 404). */
  object(key: string): Promise<Buffer | null>;
  close(): Promise<void>;
}

export async function startS3(): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), "s3rver-"));
  const s3rver = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true });
  const { port } = await s3rver.run();
  // s3rver's only account.
  const config: S3Config = {
    bucket: "zulip-uploads",
    key: "S3RVER",
    secretKey: "S3RVER",
    region: "us-east-1",
    endpointUrl: `http://127.0.0.1:${port}`,
    addressingStyle: "path",
  };
  const client = new S3Client({
    region: config.region,
    endpoint: config.endpointUrl,
    forcePathStyle: true,
    credentials: { accessKeyId: config.key!, secretAccessKey: config.secretKey! },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  await client.send(new CreateBucketCommand({ Bucket: config.bucket }));
  return {
    config,
    async object(key) {
      try {
        await client.send(new HeadObjectCommand({ Bucket: config.bucket, Key: key }));
      } catch (err) {
        if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
          return null;
        throw err;
      }
      const { Body } = await client.send(new GetObjectCommand({ Bucket: config.bucket, Key: key }));
      return Buffer.from(await Body!.transformToByteArray());
    },
    async close() {
      client.destroy();
      await s3rver.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
