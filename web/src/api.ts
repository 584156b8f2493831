/**
 * The API as the web app calls it: the typed client on `/json`, authenticated by the session
 * cookie, with the CSRF token the server put in the page (it never sees an API key). A 401 means
 * the session ended (logged out elsewhere, expired): back to the login page.
 */
import { createZulipClient, unwrap, ZulipApiError } from "../../client/src/index.ts";

function meta(name: string): string {
  return document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? "";
}

export const csrfToken = meta("csrf-token");
export const api = createZulipClient({ baseUrl: location.origin, csrfToken });

export function toLogin(): never {
  location.assign(`/login/?next=${encodeURIComponent("/" + location.hash)}`);
  throw new Error("Logged out");
}

/** The success body of a request; a 401 leaves for the login page. */
export async function call<T, E>(
  request: Promise<{ data?: T; error?: E; response: Response }>,
): Promise<T> {
  try {
    return await unwrap(request);
  } catch (err) {
    if (err instanceof ZulipApiError && err.status === 401) toLogin();
    throw err;
  }
}

/** A message to show for a failed request. */
export function errorText(err: unknown): string {
  if (err instanceof ZulipApiError) return err.message;
  return "Could not reach the server.";
}

export { ZulipApiError };
