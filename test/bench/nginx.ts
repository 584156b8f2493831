/**
 * `npm run bench`'s scaling figure (PostgreSQL): one server process against two, each behind
 * nginx run from deploy/nginx.conf (test/helpers/nginx.ts), on the same database, under the same
 * load. Both nginx instances run at once (one in front of process A, one in front of A and B) and
 * are benched alternately, operation by operation, so that drift on a shared machine hits both.
 * The processes run with RATE_LIMITING=false: the limits would cap the load, not the servers.
 */
import { freePort, onCleanUp, startServer, stopServer } from "./children.ts";
import { nginxBinary, startNginx } from "../helpers/nginx.ts";

export interface ScalingLoad {
  rps: number;
  p50: number;
  p99: number;
}
export interface ScalingRow<L extends ScalingLoad> {
  name: string;
  one: L;
  two: L;
}

/** Runs `load` per scenario against one process and two behind nginx; a string when not run. */
export async function measureScaling<S extends { name: string }, L extends ScalingLoad>(opts: {
  script: string;
  env: Record<string, string | undefined>;
  scenarios: S[];
  load: (apiBase: string, scenario: S) => Promise<L>;
}): Promise<ScalingRow<L>[] | string> {
  if (!nginxBinary()) return "not run: nginx is not installed (apt-get install -y nginx)";
  const env = { ...opts.env, RATE_LIMITING: "false" };
  const [a, b] = await Promise.all([
    startServer("our server A (behind nginx)", opts.script, env),
    startServer("our server B (behind nginx)", opts.script, env),
  ]);
  const port = (base: string) => Number(new URL(base).port);
  const one = await startNginx([port(a.child.base)], await freePort());
  onCleanUp(() => one.stop());
  const two = await startNginx([port(a.child.base), port(b.child.base)], await freePort());
  onCleanUp(() => two.stop());
  try {
    const rows: ScalingRow<L>[] = [];
    for (const s of opts.scenarios)
      rows.push({
        name: s.name,
        one: await opts.load(`${one.baseUrl}/api/v1`, s),
        two: await opts.load(`${two.baseUrl}/api/v1`, s),
      });
    return rows;
  } finally {
    await Promise.all([one.stop(), two.stop()]);
    await Promise.all([stopServer(a.child), stopServer(b.child)]);
  }
}
