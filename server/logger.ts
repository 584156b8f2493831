/**
 * Structured JSON logs (pino) to stdout; LOG_LEVEL picks the level ("silent" in tests). With
 * LOG_FORMAT=pretty (the default when stdout is a terminal) the same lines are written readably by
 * pino-pretty, in this thread (a development dependency: without it, the lines stay JSON).
 */
import { createRequire } from "node:module";
import { pino, type DestinationStream, type Logger } from "pino";

export function createLogger(level: string, format: "json" | "pretty" = "json"): Logger {
  const options = { level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime };
  if (format === "pretty") {
    try {
      const pretty = createRequire(import.meta.url)("pino-pretty") as (
        o: object,
      ) => DestinationStream;
      return pino(
        options,
        pretty({ sync: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" }),
      );
    } catch {
      /* pino-pretty is not installed (npm install --omit=dev): JSON it is */
    }
  }
  return pino(options);
}
