/**
 * Durability of the embedded database.
 *
 * PGlite (0.5.16) starts PostgreSQL with `-F`, i.e. fsync=off. Dropping it is not enough: in its
 * WebAssembly build fsync() ends in Emscripten's fd_sync, which calls the file system's
 * stream_ops.fsync, and NODEFS (the host-directory file system) has none, so nothing reaches the
 * host; fdatasync() is a no-op syscall there whatever the file system. So a durable start:
 * - PostgreSQL with fsync=on, synchronous_commit=on, full_page_writes=on, and
 *   wal_sync_method=fsync (the default, fdatasync, would sync nothing);
 * - NODEFS streams get an fsync that calls fsync(2) on the host file descriptor, so a commit
 *   returns once its WAL is on disk, and checkpoints (and recovery's sync of the data directory
 *   after a crash) reach the disk as PostgreSQL expects; a failed host fsync fails PostgreSQL's.
 */
import { closeSync, fsyncSync, openSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import type { PGliteOptions } from "@electric-sql/pglite";

let hostFsyncs = 0;

/** How many host fsync(2) calls durable PGlite instances of this process have made (for tests). */
export function pgliteHostFsyncCount(): number {
  return hostFsyncs;
}

interface EmscriptenNodeFs {
  NODEFS?: {
    stream_ops: { fsync?: (stream: { nfd?: unknown }) => number };
    tryFSOperation?: (f: () => unknown) => unknown;
  };
  FS: { ErrnoError: new (errno: number) => Error };
}

export async function pgliteDurability(
  dataDir: string,
): Promise<Pick<PGliteOptions, "fs" | "startParams">> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { NodeFS } = await import("@electric-sql/pglite/nodefs");
  type PreRun = NonNullable<
    Awaited<ReturnType<InstanceType<typeof NodeFS>["init"]>>["emscriptenOpts"]["preRun"]
  >[number];
  const hostFsync: PreRun = (mod) => {
    const { NODEFS, FS } = mod as unknown as EmscriptenNodeFs;
    if (!NODEFS?.stream_ops)
      throw new Error("this PGlite build has no NODEFS: cannot make the data directory durable");
    const run = NODEFS.tryFSOperation?.bind(NODEFS) ?? ((f: () => unknown) => f()); // host errors → errno
    NODEFS.stream_ops.fsync = (stream) => {
      if (typeof stream.nfd !== "number") throw new FS.ErrnoError(8); // EBADF
      run(() => fsyncSync(stream.nfd as number));
      hostFsyncs++;
      return 0;
    };
  };
  class HostFsyncNodeFS extends NodeFS {
    override async init(...args: Parameters<InstanceType<typeof NodeFS>["init"]>) {
      const result = await super.init(...args);
      result.emscriptenOpts.preRun = [...(result.emscriptenOpts.preRun ?? []), hostFsync];
      return result;
    }
  }
  const settings = {
    fsync: "on",
    synchronous_commit: "on",
    full_page_writes: "on",
    wal_sync_method: "fsync",
  };
  return {
    fs: new HostFsyncNodeFS(dataDir),
    startParams: [
      ...PGlite.defaultStartParams.filter((p) => p !== "-F"),
      ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
    ],
  };
}

/** fsync(2) every file and directory under dir (and, if `entry`, the directory holding dir's own entry). */
export function fsyncTree(dir: string, entry = false): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) fsyncTree(join(dir, e.name));
    else if (e.isFile()) fsyncPath(join(dir, e.name), false);
  }
  fsyncPath(dir, true);
  if (entry) fsyncPath(dirname(dir), true);
}

function fsyncPath(path: string, isDir: boolean): void {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    if (isDir && process.platform === "win32") return; // directories cannot be opened there
    throw e;
  }
  try {
    fsyncSync(fd);
  } catch (e) {
    // Like PostgreSQL's fsync_fname: some file systems cannot fsync a directory.
    if (!(
      isDir &&
      ["EINVAL", "EBADF", "EISDIR", "EPERM"].includes((e as NodeJS.ErrnoException).code ?? "")
    ))
      throw e;
  } finally {
    closeSync(fd);
  }
}
