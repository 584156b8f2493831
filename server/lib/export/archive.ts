/**
 * The archives exports travel in: a Zulip export is a `.tar.gz` of one directory (Zulip's
 * `export` command and `POST /export/realm` make it so), a Slack export a `.zip`. An import
 * unpacks the archive to a directory first, entry by entry to disk (so memory stays flat
 * whatever its size), then reads the files it needs in the order it needs them.
 */
import { createReadStream, createWriteStream, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import tar from "tar-stream";
import yauzl from "yauzl";

/** An archive entry's path inside `into`, or an error for one that would land outside it. */
function safePath(into: string, name: string): string {
  const path = normalize(join(into, name));
  if (path !== into && !path.startsWith(into + sep))
    throw new Error(`the archive's entry '${name}' points outside the archive`);
  return path;
}

/** Unpacks a `.tar.gz`, `.tgz`, `.tar` or `.zip` into the directory `into` (made if missing). */
export async function unpackArchive(path: string, into: string): Promise<void> {
  mkdirSync(into, { recursive: true });
  if (/\.zip$/i.test(path)) return unzip(path, into);
  const extract = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on("entry", (header, stream, next) => {
      let target: string;
      try {
        target = safePath(into, header.name);
      } catch (err) {
        stream.resume();
        return next(err as Error);
      }
      if (header.type === "directory") {
        mkdirSync(target, { recursive: true });
        stream.resume();
        stream.on("end", next);
        return;
      }
      if (header.type !== "file") {
        // Links and devices are never part of an export.
        stream.resume();
        stream.on("end", next);
        return;
      }
      mkdirSync(dirname(target), { recursive: true });
      pipeline(stream, createWriteStream(target)).then(() => next(), next);
    });
    extract.on("finish", resolve);
    extract.on("error", reject);
  });
  const source = createReadStream(path);
  const gz = /\.(tar\.gz|tgz)$/i.test(path);
  await Promise.all([
    gz ? pipeline(source, createGunzip(), extract) : pipeline(source, extract),
    done,
  ]);
}

function unzip(path: string, into: string): Promise<void> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error("not a zip file"));
      zip.on("error", reject);
      zip.on("end", () => resolve());
      zip.on("entry", (entry: yauzl.Entry) => {
        let target: string;
        try {
          target = safePath(into, entry.fileName);
        } catch (e) {
          zip.close();
          return reject(e instanceof Error ? e : new Error(String(e)));
        }
        if (entry.fileName.endsWith("/")) {
          mkdirSync(target, { recursive: true });
          return zip.readEntry();
        }
        mkdirSync(dirname(target), { recursive: true });
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error(`cannot read ${entry.fileName}`));
          pipeline(stream, createWriteStream(target)).then(
            () => zip.readEntry(),
            (werr: unknown) => reject(werr as Error),
          );
        });
      });
      zip.readEntry();
    });
  });
}

/** Every file below `dir`, as paths relative to it, sorted. */
function filesBelow(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else out.push(relative(dir, full));
    }
  };
  walk(dir);
  return out;
}

/** Packs the directory `dir` as `<root>/…` into the `.tar.gz` file `out`, file by file. */
export async function packTarGz(dir: string, root: string, out: string): Promise<void> {
  const pack = tar.pack();
  const written = pipeline(pack, createGzip(), createWriteStream(out));
  for (const file of filesBelow(dir)) {
    const full = join(dir, file);
    const { size, mtime } = statSync(full);
    const entry = pack.entry({ name: `${root}/${file.split(sep).join("/")}`, size, mtime });
    await pipeline(createReadStream(full), entry);
  }
  pack.finalize();
  await written;
}
