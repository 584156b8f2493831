/**
 * What every upload store does (lib/uploads/upload-storage.ts picks one: the local disk, or
 * S3 in upload-storage-s3.ts). Its own module, so that both stores implement it without
 * importing each other.
 */
import type { Readable } from "node:stream";

/** How a file is to reach the browser: the headers a local file is sent with, or a presigned URL answers with. */
export interface ServeAs {
  contentType: string;
  contentDisposition?: string;
  cacheControl: string;
}

/** A stored file being read: its bytes as a stream (to be consumed or destroyed), size and time. */
export interface StoredFile {
  body: Readable;
  size: number;
  lastModified: Date;
}

/** A file this process sends itself, or the URL the client is redirected to. */
export type Served = { file: string } | { redirect: string };

export interface UploadStorage {
  /** Stores a received file (waiting in the incoming directory, which it leaves) under its path id. */
  put(pathId: string, file: { path: string; contentType: string }): Promise<void>;
  exists(pathId: string): Promise<boolean>;
  /** Deletes the files of these path ids; one already gone is no error. */
  delete(pathIds: string[]): Promise<void>;
  /**
   * Reads a stored file (an export copies each so, one at a time, whatever its size), or null
   * when the store has none under that path id.
   */
  read(pathId: string): Promise<StoredFile | null>;
  /** How to serve a path id, or null for one that names nothing this store can hold. */
  serve(pathId: string, as: ServeAs): Promise<Served | null>;
}
