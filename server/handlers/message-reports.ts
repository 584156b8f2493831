import { NotImplementedError } from "../errors.ts";
import type { Handler } from "../http/types.ts";

export const reportMessage: Handler<"report-message"> = async () => {
  throw new NotImplementedError("report-message");
};
