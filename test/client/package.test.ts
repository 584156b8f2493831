/**
 * The typed client as another project gets it: `npm pack` in client/, the tarball installed into
 * an empty project, a consumer script type-checked by tsc (strict; NodeNext and Bundler
 * resolution) and run with plain `node` against a running server, and a browser bundle
 * (esbuild, platform "browser") run in a context that has only what browsers have.
 */
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import vm from "node:vm";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/server.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const server = useTestServer();
const project = mkdtempSync(join(tmpdir(), "client-consumer-"));
let html: Server;
let htmlUrl: string;

const CONSUMER = `
import { createZulipClient, eventQueue, unwrap, ZulipApiError, ZulipUnexpectedResponseError, type ZulipEvent } from "zulip-compatible-client";
import { loadZuliprc } from "zulip-compatible-client/node";

declare const process: { env: Record<string, string | undefined> };

const rc = loadZuliprc();
const zulip = createZulipClient({ baseUrl: rc.baseUrl, email: rc.email, apiKey: rc.apiKey, userAgent: "consumer/1.0" });
const me = await unwrap(zulip.GET("/users/me"));
const userId: number = me.user_id;

const stop = new AbortController();
const seen: ZulipEvent[] = [];
let eventContent: string | undefined;
let registrations = 0;
const loop = (async () => {
  for await (const event of eventQueue(zulip, { register: { event_types: ["message"] }, signal: stop.signal, onRegister: () => void registrations++ })) {
    seen.push(event);
    // The union narrows: a message event's message is a Message, with no cast.
    if (event.type === "message") {
      eventContent = event.message.content;
      stop.abort();
    }
  }
})();
while (registrations === 0) await new Promise((r) => setTimeout(r, 20));
const sent = await unwrap(zulip.POST("/messages", { body: { type: "stream", to: "Verona", topic: "from the tarball", content: "Hello from **plain node**" } }));
const { message } = await unwrap(zulip.GET("/messages/{message_id}", { params: { path: { message_id: sent.id } } }));
await loop;

let apiError: { status: number; code: string; msg: string } | undefined;
try {
  await unwrap(zulip.POST("/messages", { body: { type: "channel", to: 4242, topic: "t", content: "c" } }));
} catch (err) {
  if (err instanceof ZulipApiError) apiError = { status: err.status, code: err.code, msg: err.message };
}

let unexpected: { status: number; contentType: string | null; body: string } | undefined;
try {
  await createZulipClient({ baseUrl: process.env.HTML_SITE!, email: rc.email, apiKey: rc.apiKey }).GET("/users/me");
} catch (err) {
  if (err instanceof ZulipUnexpectedResponseError) unexpected = { status: err.status, contentType: err.contentType, body: err.body };
}

console.log(JSON.stringify({ userId, content: message.content, eventContent, events: seen.map((e) => e.type), registrations, apiError, unexpected }));
`;

const BROWSER = `
import { createZulipClient, unwrap } from "zulip-compatible-client";
export async function main(baseUrl, email, apiKey) {
  const zulip = createZulipClient({ baseUrl, email, apiKey });
  return (await unwrap(zulip.GET("/users/me"))).email;
}
`;

function tsconfig(resolution: "NodeNext" | "Bundler") {
  return {
    compilerOptions: {
      target: "ES2022",
      module: resolution === "NodeNext" ? "NodeNext" : "ESNext",
      moduleResolution: resolution,
      lib: ["ES2022", "DOM"],
      types: [],
      strict: true,
      skipLibCheck: false,
      outDir: "out",
      noEmit: resolution !== "NodeNext",
    },
    files: ["consumer.ts"],
  };
}

beforeAll(async () => {
  html = createServer((_req, res) =>
    res
      .writeHead(404, { "Content-Type": "text/html" })
      .end("<html><body><h1>Not Found</h1></body></html>"),
  );
  await new Promise<void>((resolve) => html.listen(0, "127.0.0.1", resolve));
  htmlUrl = `http://127.0.0.1:${(html.address() as AddressInfo).port}`;

  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", project], {
    cwd: join(root, "client"),
  });
  const tarball = join(project, JSON.parse(stdout)[0].filename);
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
  await run(
    "npm",
    ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball],
    { cwd: project },
  );
}, 240_000);

afterAll(async () => {
  await new Promise((resolve) => html?.close(resolve));
  rmSync(project, { recursive: true, force: true });
});

describe("the packed client", () => {
  it("installs with openapi-fetch as its only dependency, and carries JavaScript, .d.ts files and the spec's types", () => {
    expect(
      readdirSync(join(project, "node_modules"))
        .filter((d) => !d.startsWith("."))
        .sort(),
    ).toEqual(["openapi-fetch", "openapi-typescript-helpers", "zulip-compatible-client"]);
    const pkg = JSON.parse(
      readFileSync(
        join(project, "node_modules", "zulip-compatible-client", "package.json"),
        "utf8",
      ),
    );
    expect(pkg.exports["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" });
    const dist = readdirSync(join(project, "node_modules", "zulip-compatible-client", "dist"));
    expect(dist).toEqual(
      expect.arrayContaining([
        "index.js",
        "index.d.ts",
        "node.js",
        "node.d.ts",
        "events.js",
        "openapi.d.ts",
      ]),
    );
    expect(dist.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
  });

  it("type-checks a strict consumer with NodeNext and with Bundler resolution", async () => {
    writeFileSync(join(project, "consumer.ts"), CONSUMER);
    for (const resolution of ["NodeNext", "Bundler"] as const) {
      writeFileSync(
        join(project, `tsconfig.${resolution}.json`),
        JSON.stringify(tsconfig(resolution)),
      );
      await expect(
        run(process.execPath, [tsc, "-p", `tsconfig.${resolution}.json`], { cwd: project }).then(
          () => "ok",
        ),
      ).resolves.toBe("ok");
    }
    // A mistake in a consumer is caught by the published types.
    writeFileSync(
      join(project, "wrong.ts"),
      `import { createZulipClient } from "zulip-compatible-client";\ncreateZulipClient({ baseUrl: "x" }).GET("/users/me", { params: { query: { nope: 1 } } });\ncreateZulipClient({ baseUrl: "x" }).GET("/no/such/path");\nimport type { ZulipEvent } from "zulip-compatible-client";\nexport const body = (e: ZulipEvent) => e.message;\n`,
    );
    writeFileSync(
      join(project, "tsconfig.wrong.json"),
      JSON.stringify({
        ...tsconfig("NodeNext"),
        files: ["wrong.ts"],
        compilerOptions: { ...tsconfig("NodeNext").compilerOptions, noEmit: true },
      }),
    );
    const failed = await run(process.execPath, [tsc, "-p", "tsconfig.wrong.json"], {
      cwd: project,
    }).catch((e: { stdout: string }) => e.stdout);
    expect(failed).toContain("wrong.ts(3,");
    // An event's fields need its type checked first.
    expect(failed).toMatch(/wrong\.ts\(5,.*Property 'message' does not exist/);
    expect(failed).toContain("error TS");
  }, 120_000);

  it("runs with plain node: zuliprc, send and read back, the event loop, a Zulip error and a non-Zulip answer", async () => {
    const hamlet = server.creds.users.hamlet!;
    const rc = join(project, "zuliprc");
    writeFileSync(
      rc,
      `[api]\nemail = ${hamlet.email}\nkey = ${hamlet.api_key}\nsite = ${server.baseUrl}\n`,
    );
    const { stdout } = await run(process.execPath, [join(project, "out", "consumer.js")], {
      cwd: project,
      env: { PATH: process.env.PATH, ZULIP_CONFIG: rc, HTML_SITE: htmlUrl },
    });
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({
      userId: hamlet.user_id,
      content: "<p>Hello from <strong>plain node</strong></p>",
      eventContent: "Hello from **plain node**",
      events: ["message"],
      registrations: 1,
      apiError: {
        status: 400,
        code: "STREAM_DOES_NOT_EXIST",
        msg: "Channel with ID '4242' does not exist",
      },
      unexpected: {
        status: 404,
        contentType: "text/html",
        body: "<html><body><h1>Not Found</h1></body></html>",
      },
    });
  }, 60_000);

  it("bundles for the browser and runs with only the browser's globals", async () => {
    writeFileSync(join(project, "browser.js"), BROWSER);
    const out = await build({
      entryPoints: [join(project, "browser.js")],
      bundle: true,
      platform: "browser",
      format: "iife",
      globalName: "app",
      write: false,
      logLevel: "silent",
    });
    const code = out.outputFiles[0]!.text;
    expect(code).not.toMatch(/\bBuffer\b|require\(|node:/);
    const browserGlobals = {
      fetch,
      Request,
      Response,
      Headers,
      URL,
      URLSearchParams,
      TextEncoder,
      TextDecoder,
      btoa,
      atob,
      AbortController,
      setTimeout,
      clearTimeout,
      console,
    };
    const context = vm.createContext({ ...browserGlobals });
    vm.runInContext(code, context);
    const hamlet = server.creds.users.hamlet!;
    await expect(
      vm.runInContext("app.main", context)(server.baseUrl, hamlet.email, hamlet.api_key),
    ).resolves.toBe(hamlet.email);
  });
});
