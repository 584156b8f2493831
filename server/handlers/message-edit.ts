import { NotImplementedError } from "../errors.ts";
import type { Handler } from "../http/types.ts";

export const updateMessage: Handler<"update-message"> = async () => {
  throw new NotImplementedError("update-message");
};
