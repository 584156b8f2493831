/**
 * Requests Node's HTTP parser refuses before Express sees them (headers over 16 KB, a malformed
 * request line or header, a bad chunk) are still answered with Zulip's JSON error envelope
 * rather than Node's bare status line, so a client always gets `{result, msg, code}`.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";

const REFUSALS: Record<string, [status: number, reason: string, msg: string]> = {
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large", "Request headers too large"],
  HPE_URI_TOO_LONG: [414, "URI Too Long", "Request URL too long"],
};

export function answerClientErrors(server: Server) {
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    // Nothing can be written to a connection that is already gone, or mid-response.
    if (
      err.code === "ECONNRESET" ||
      !socket.writable ||
      (socket as { _httpMessage?: unknown })._httpMessage
    ) {
      socket.destroy();
      return;
    }
    const [status, reason, msg] = REFUSALS[err.code ?? ""] ?? [
      400,
      "Bad Request",
      "Malformed HTTP request",
    ];
    const body = JSON.stringify({ result: "error", msg, code: "BAD_REQUEST" });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
