/**
 * LISTEN on PostgreSQL through a dedicated connection (a pooled one would be handed to other
 * queries). When the connection drops it is re-opened with a growing delay, and `onReconnect`
 * runs once it listens again: notifications sent in between are lost, so the listener must
 * catch up by reading what it may have missed.
 */
import pg from "pg";

export async function listenPostgres(
  url: string,
  channel: string,
  onNotify: (payload: string) => void,
  onReconnect?: () => void,
): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let delay = 100;

  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    c.on("notification", (msg) => {
      if (msg.channel === channel) onNotify(msg.payload ?? "");
    });
    c.on("error", () => {}); // followed by "end"
    c.on("end", () => {
      if (stopped || client !== c) return;
      client = undefined;
      schedule();
    });
    await c.connect();
    await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    if (stopped) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    delay = 100;
  };
  const schedule = () => {
    const reconnect = async () => {
      try {
        await connect();
        onReconnect?.();
      } catch {
        delay = Math.min(delay * 2, 5_000);
        if (!stopped) schedule();
      }
    };
    // reconnect never rejects: a failure schedules the next try.
    retry = setTimeout(() => void reconnect(), delay);
    retry.unref();
  };

  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const c = client;
    client = undefined;
    await c?.end().catch(() => {});
  };
}
