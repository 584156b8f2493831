/** The only place that writes a success body: `{result, msg, ...data}` plus ignored parameters. */
import type { Response } from "express";

export function jsonSuccess(res: Response, data: object, ignored: string[]) {
  const body: Record<string, unknown> = { result: "success", msg: "", ...data };
  if (ignored.length > 0) body.ignored_parameters_unsupported = ignored;
  res.status(200).json(body);
}

/** Parameters the client sent that the operation does not declare (Zulip: sorted, feature level 167). */
export function ignoredParameters(known: Set<string>, sent: Iterable<string>): string[] {
  return [...new Set([...sent].filter((k) => !known.has(k)))].sort();
}
