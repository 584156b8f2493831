/**
 * A fake video-call provider on loopback: an OAuth 2 authorize page (which answers at once with
 * a redirect carrying a code), a token endpoint (authorization_code and refresh_token grants), a
 * create-meeting endpoint that takes bearer tokens, and BigBlueButton's api/create. It records
 * every request and fails on demand.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  /** The query string as sent (`?a=b`), for checksums over it. */
  search: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface FakeVideoProvider {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  requests: RecordedRequest[];
  /** Requests to one path, in order. */
  to(path: string): RecordedRequest[];
  /** Access tokens the meeting endpoint accepts (refresh tokens give new ones). */
  validTokens: Set<string>;
  /** What the next token responses give: refresh tokens, expiry. */
  issue: { refreshToken: boolean; expiresIn?: number };
  /** Make an endpoint answer this status (once or always) instead of its work. */
  failNext(path: string, status: number): void;
  failAlways(path: string, status: number | null): void;
  /** BigBlueButton's XML answer to api/create (SUCCESS with a createTime by default). */
  bbbAnswer: string | null;
  /** Runs before each answer (a test's stand-in for something happening meanwhile). */
  onRequest: ((request: RecordedRequest) => Promise<void>) | null;
  /** Forget every request, code and token, and answer normally again (token numbers restart at 1). */
  reset(): void;
  close(): Promise<void>;
}

export const CLIENT_ID = "fake-client-id";
export const CLIENT_SECRET = "fake-client-secret";

export async function startFakeVideoProvider(): Promise<FakeVideoProvider> {
  const requests: RecordedRequest[] = [];
  const failOnce = new Map<string, number>();
  const failAlways = new Map<string, number>();
  let issued = 0;
  const refreshTokens = new Set<string>();
  const codes = new Set<string>();

  const fake: FakeVideoProvider = {
    baseUrl: "",
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    requests,
    to: (path) => requests.filter((r) => r.path === path),
    validTokens: new Set(),
    issue: { refreshToken: true },
    failNext: (path, status) => void failOnce.set(path, status),
    failAlways: (path, status) =>
      void (status === null ? failAlways.delete(path) : failAlways.set(path, status)),
    bbbAnswer: null,
    onRequest: null,
    reset() {
      requests.length = 0;
      failOnce.clear();
      failAlways.clear();
      issued = 0;
      refreshTokens.clear();
      codes.clear();
      fake.validTokens.clear();
      fake.issue = { refreshToken: true };
      fake.bbbAnswer = null;
      fake.onRequest = null;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  function tokenAnswer() {
    issued++;
    const access = `access-${issued}`;
    fake.validTokens.add(access);
    const answer: Record<string, unknown> = { access_token: access, token_type: "bearer" };
    if (fake.issue.refreshToken) {
      answer.refresh_token = `refresh-${issued}`;
      refreshTokens.add(`refresh-${issued}`);
    }
    if (fake.issue.expiresIn !== undefined) answer.expires_in = fake.issue.expiresIn;
    return answer;
  }

  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => void answer());
    async function answer() {
      const url = new URL(req.url!, "http://fake");
      const recorded = {
        method: req.method!,
        path: url.pathname,
        query: url.searchParams,
        search: url.search,
        headers: req.headers,
        body,
      };
      requests.push(recorded);
      await fake.onRequest?.(recorded);
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(value));
      const failure = failOnce.get(url.pathname) ?? failAlways.get(url.pathname);
      if (failure !== undefined) {
        failOnce.delete(url.pathname);
        return json(failure, { error: "failing on demand" });
      }
      const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString("base64")}`;
      switch (url.pathname) {
        case "/oauth/authorize": {
          // The user consents at once: back to the redirect URI with a code and the state.
          const code = `code-${requests.length}`;
          codes.add(code);
          const back = new URL(url.searchParams.get("redirect_uri")!);
          back.searchParams.set("code", code);
          back.searchParams.set("state", url.searchParams.get("state") ?? "");
          return res.writeHead(302, { Location: back.toString() }).end();
        }
        case "/oauth/token": {
          const form = new URLSearchParams(body);
          if (req.headers.authorization !== basic) return json(401, { error: "invalid_client" });
          if (form.get("grant_type") === "authorization_code" && codes.delete(form.get("code")!))
            return json(200, tokenAnswer());
          if (
            form.get("grant_type") === "refresh_token" &&
            refreshTokens.delete(form.get("refresh_token")!)
          )
            return json(200, tokenAnswer());
          return json(400, { error: "invalid_grant" });
        }
        case "/v2/users/me/meetings": {
          const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
          if (!token || !fake.validTokens.has(token))
            return json(401, { code: 124, message: "Invalid access token" });
          return json(201, {
            id: requests.length,
            join_url: `https://meet.example/j/${requests.length}`,
          });
        }
        case "/bigbluebutton/api/create":
          return res
            .writeHead(200, { "Content-Type": "text/xml" })
            .end(
              fake.bbbAnswer ??
                "<response><returncode>SUCCESS</returncode><meetingID>m</meetingID>" +
                  "<createTime>1700000000000</createTime></response>",
            );
        default:
          return json(404, { error: "not found" });
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

/** The server's provider setting for the fake provider, as Zoom or Webex name it. */
export function fakeProviderConfig(fake: FakeVideoProvider, name: "Zoom" | "Webex") {
  return {
    name,
    clientId: fake.clientId,
    clientSecret: fake.clientSecret,
    authorizeUrl: `${fake.baseUrl}/oauth/authorize`,
    tokenUrl: `${fake.baseUrl}/oauth/token`,
    meetingUrl: `${fake.baseUrl}/v2/users/me/meetings`,
    joinUrlField: "join_url",
    scope: "meeting:write",
  };
}
