/** Structured JSON logs (pino) to stdout; LOG_LEVEL picks the level ("silent" in tests). */
import { pino, type Logger } from "pino";

export function createLogger(level: string): Logger {
  return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime });
}
