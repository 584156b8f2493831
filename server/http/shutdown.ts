/**
 * Graceful stop of the HTTP server, for main.ts's SIGTERM/SIGINT handler. It lives in its own
 * module because doing it right takes more than `server.close()`: Node 20's close() stops
 * listening and drops idle keep-alive connections, but it leaves the busy ones open after their
 * response (which still says `Connection: keep-alive`, inviting the client to send more on a
 * socket that is about to go), and nothing bounds how long it waits. Here:
 *
 * - the listening socket closes at once: new connections are refused (ECONNREFUSED, which tells
 *   a client for certain that its request was not received);
 * - every response from then on says `Connection: close`, so that each busy connection is closed
 *   by the server right after its response and no client sends another request on it;
 * - `release()` (EventBus.close: long-polls answer with no events) runs at once and then on every
 *   sweep, for polls that arrived on open connections meanwhile;
 * - idle connections are closed after a short grace (see IDLE_GRACE_MS), then on every sweep;
 *   so are connections on which the client has sent nothing at all (a browser's preconnect, a
 *   pool's spare): Node counts those as busy (its headers timeout runs from the connect), so
 *   closeIdleConnections() leaves them, and one would hold the shutdown to its bound;
 * - after `timeoutMs` whatever is left is destroyed.
 *
 * drain() resolves once every connection is closed: true if all of them finished, false if the
 * bound cut some off. The caller closes the database afterwards.
 *
 * Known limit: connections whose TCP handshake the kernel completed but that the process has not
 * accept()ed yet when the listener closes are reset by the kernel (the request was never seen,
 * but the client gets ECONNRESET, not ECONNREFUSED). libuv accepts one connection per event-loop
 * turn, so a burst of new connections to a busy server can wait there a while.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import net from "node:net";
import type { Logger } from "pino";

/**
 * A connection that looks idle when shutdown starts may already hold the client's next request in
 * the kernel's buffer: the event loop reads sockets only between tasks, and PGlite's queries keep
 * it busy for long stretches. Closing it at once would reset a request the client has sent.
 * Requests read within the grace are served (with `Connection: close`); a connection still idle
 * after it is one the client is not using, and is closed.
 */
const IDLE_GRACE_MS = 200;

export interface DrainOptions {
  /** Longest wait for requests in flight before their connections are destroyed. */
  timeoutMs: number;
  log: Logger;
  /** Ends requests that would otherwise wait (long-polls); called at once and on every sweep. */
  release?: () => void;
}

export function gracefulShutdown(server: Server) {
  const inFlight = new Set<ServerResponse>();
  const sockets = new Set<net.Socket>();
  let draining = false;
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.prependListener("request", (_req: IncomingMessage, res: ServerResponse) => {
    if (draining) res.setHeader("Connection", "close");
    inFlight.add(res);
    res.once("close", () => inFlight.delete(res));
  });

  return async function drain({ timeoutMs, log, release }: DrainOptions): Promise<boolean> {
    draining = true;
    for (const res of inFlight) if (!res.headersSent) res.setHeader("Connection", "close");
    const closed = new Promise<void>((resolve) => server.once("close", () => resolve()));
    // net.Server's close(), not http.Server's: the latter also drops idle connections at once,
    // which IDLE_GRACE_MS avoids. It stops listening; "close" follows the last connection.
    net.Server.prototype.close.call(server);
    release?.();
    // setImmediate: the sweep runs after the loop's poll phase, which reads what clients sent
    // while the loop was busy (PGlite queries block it), so such requests are no longer "idle".
    const sweep = setInterval(
      () =>
        setImmediate(() => {
          release?.();
          server.closeIdleConnections();
          for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
        }),
      IDLE_GRACE_MS,
    );
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<true>(
      (resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)),
    );
    const cutOff = await Promise.race([closed.then(() => false), timedOut]);
    clearInterval(sweep);
    clearTimeout(timer);
    if (cutOff) {
      log.warn(
        { requests: inFlight.size, timeoutMs },
        "requests still running at the shutdown bound: closing their connections",
      );
      server.closeAllConnections();
      await closed;
    }
    return !cutOff;
  };
}
