import { NotImplementedError } from "../errors.ts";
import type { Handler } from "../http/types.ts";

export const createScheduledMessage: Handler<"create-scheduled-message"> = async () => {
  throw new NotImplementedError("create-scheduled-message");
};
