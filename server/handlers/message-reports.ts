import { doReportMessage } from "../actions/messages/message-reports.ts";
import type { Handler } from "../http/types.ts";

/** POST /messages/{message_id}/report (zerver/views/message_report.py report_message_backend). */
export const reportMessage: Handler<"report-message"> = async ({ path, body }, ctx) => {
  await doReportMessage(ctx, {
    messageId: path.message_id,
    reportType: body.report_type,
    description: body.description ?? "",
  });
  return {};
};
