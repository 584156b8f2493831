/**
 * A fetch that sends the request with a Host header of the test's choosing (Node's fetch always
 * sends the URL's): how a test talks to a second organization on the test server, which tells
 * organizations apart by the Host's first label, without DNS for `<id>.zulip.testserver`.
 */
import http from "node:http";

export function fetchAsHost(host: string): typeof fetch {
  return async (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    const url = new URL(request.url);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers: Record<string, string> = Object.fromEntries(request.headers);
    headers.host = host;
    if (body) headers["content-length"] = String(body.length);
    return new Promise<Response>((resolve, reject) => {
      const req = http.request(
        {
          hostname: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: request.method,
          headers,
          setHost: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const status = res.statusCode ?? 500;
            const out = new Headers();
            for (const [k, v] of Object.entries(res.headers))
              if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(", ") : v);
            resolve(
              new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), {
                status,
                headers: out,
              }),
            );
          });
        },
      );
      req.on("error", reject);
      if (body) req.write(body);
      req.end();
    });
  };
}
