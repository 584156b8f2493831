/** Uploads and raw requests as a development user, for tests that need a file or a plain fetch. */
import type { TestServer } from "./server.ts";

/** The HTTP Basic header of a development user's API key. */
export function basicAuth(server: TestServer, shortName: string): string {
  const cred = server.creds.users[shortName] ?? server.creds.bots[shortName];
  if (!cred) throw new Error(`No user or bot '${shortName}'`);
  return `Basic ${Buffer.from(`${cred.email}:${cred.api_key}`).toString("base64")}`;
}

/** POST /user_uploads as a browser does (multipart); the file's `/user_uploads/…` URL. */
export async function uploadFile(
  server: TestServer,
  shortName: string,
  fileName: string,
  data: string | Buffer = "zulip!",
  type = "text/plain",
): Promise<string> {
  const form = new FormData();
  form.append(
    "file",
    new Blob([typeof data === "string" ? data : new Uint8Array(data)], { type }),
    fileName,
  );
  const response = await fetch(`${server.baseUrl}/api/v1/user_uploads`, {
    method: "POST",
    headers: { Authorization: basicAuth(server, shortName) },
    body: form,
  });
  if (response.status !== 200) throw new Error(`upload failed: ${await response.text()}`);
  return ((await response.json()) as { url: string }).url;
}
