/**
 * GET /health (Zulip's zerver/views/health.py, outside /api/v1 and without authentication): 200
 * `{"result": "success", "msg": ""}` when the database answers and is migrated; otherwise 500
 * with Zulip's ServerNotReadyError (`SERVER_NOT_READY`: "Cannot query postgresql", "Database is
 * empty"). A database that does not answer within HEALTH_TIMEOUT_MS counts as not answering,
 * so a load balancer's check never hangs.
 */
import type { Request, Response } from "express";
import type { AppDeps } from "../context.ts";

const HEALTH_TIMEOUT_MS = 5000;

async function databaseProblem(deps: Pick<AppDeps, "db">): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">(
    (resolve) => (timer = setTimeout(() => resolve("timeout"), HEALTH_TIMEOUT_MS)),
  );
  try {
    const query = deps.db.$queryRaw<
      { migrated: boolean }[]
    >`SELECT EXISTS (SELECT 1 FROM _prisma_migrations) AS migrated`;
    const answer = await Promise.race([query, timeout]);
    if (answer === "timeout") {
      query.catch(() => {});
      return "Cannot query postgresql";
    }
    return answer[0]?.migrated ? null : "Database is empty";
  } catch {
    return "Cannot query postgresql";
  } finally {
    clearTimeout(timer);
  }
}

export function health(deps: Pick<AppDeps, "db">) {
  return async function healthCheck(_req: Request, res: Response) {
    const problem = await databaseProblem(deps);
    res.set("Cache-Control", "no-store");
    if (problem) res.status(500).json({ result: "error", msg: problem, code: "SERVER_NOT_READY" });
    else res.json({ result: "success", msg: "" });
  };
}
