/**
 * Every channel the user may see (the channel browser's list): the register's `subscriptions`,
 * `unsubscribed` and `never_subscribed`, kept current by `stream` (create, update, delete) and
 * `subscription` (add, remove, peer_add, peer_remove) events. Whether I am subscribed is
 * model.ts's `subscriptions`; this keeps the channels themselves, and who may create which kind.
 */
import { signal } from "@preact/signals";
import { onEvent, onRegister } from "./events.ts";
import type { GroupSettingValue } from "./permissions.ts";

export interface Channel {
  stream_id: number;
  name: string;
  description: string;
  rendered_description: string;
  invite_only: boolean;
  is_web_public: boolean;
  is_archived?: boolean;
  subscriber_count?: number;
}

export const channels = signal<ReadonlyMap<number, Channel>>(new Map());

export interface CreationSettings {
  public?: GroupSettingValue;
  private?: GroupSettingValue;
  webPublic?: GroupSettingValue;
  /** Web-public channels need the server's and the organization's spectator access. */
  webPublicAvailable: boolean;
}
export const creation = signal<CreationSettings>({ webPublicAvailable: false });

function pick(c: Channel): Channel {
  return {
    stream_id: c.stream_id,
    name: c.name,
    description: c.description,
    rendered_description: c.rendered_description,
    invite_only: c.invite_only,
    is_web_public: c.is_web_public,
    is_archived: c.is_archived,
    subscriber_count: c.subscriber_count,
  };
}

function replace(id: number, change: (c: Channel) => Channel) {
  const c = channels.value.get(id);
  if (c) channels.value = new Map(channels.value).set(id, change(c));
}

onRegister((state) => {
  const s = state;
  const next = new Map<number, Channel>();
  for (const name of ["never_subscribed", "unsubscribed", "subscriptions"])
    for (const c of (s[name] as Channel[] | undefined) ?? [])
      if (!c.is_archived) next.set(c.stream_id, pick(c));
  channels.value = next;
  creation.value = {
    public: s.realm_can_create_public_channel_group as GroupSettingValue | undefined,
    private: s.realm_can_create_private_channel_group as GroupSettingValue | undefined,
    webPublic: s.realm_can_create_web_public_channel_group as GroupSettingValue | undefined,
    webPublicAvailable:
      s.server_web_public_streams_enabled === true && s.realm_enable_spectator_access === true,
  };
});

onEvent("stream", (event) => {
  const e = event as {
    op: string;
    streams?: Channel[];
    stream_id?: number;
    property?: string;
    value?: unknown;
  };
  if (e.op === "create") {
    const next = new Map(channels.value);
    for (const c of e.streams ?? []) next.set(c.stream_id, pick(c));
    channels.value = next;
  } else if (e.op === "delete") {
    const next = new Map(channels.value);
    for (const c of e.streams ?? []) next.delete(c.stream_id);
    channels.value = next;
  } else if (e.op === "update" && e.stream_id !== undefined && e.property) {
    const prop = e.property;
    const extra = event as { rendered_description?: string };
    replace(e.stream_id, (c) => ({
      ...c,
      ...(prop in c || prop === "subscriber_count" ? { [prop]: e.value } : {}),
      ...(extra.rendered_description !== undefined
        ? { rendered_description: extra.rendered_description }
        : {}),
    }));
  }
});

onEvent("subscription", (event) => {
  const e = event as {
    op: string;
    subscriptions?: Channel[];
    stream_ids?: number[];
    user_ids?: number[];
  };
  if (e.op === "add") {
    const next = new Map(channels.value);
    for (const c of e.subscriptions ?? []) next.set(c.stream_id, pick(c));
    channels.value = next;
  } else if (e.op === "remove") {
    // Still visible (public), one subscriber fewer: the count follows at once.
    const next = new Map(channels.value);
    for (const c of e.subscriptions ?? []) {
      const old = next.get(c.stream_id);
      if (old?.subscriber_count !== undefined)
        next.set(c.stream_id, { ...old, subscriber_count: Math.max(0, old.subscriber_count - 1) });
    }
    channels.value = next;
  } else if (e.op === "peer_add" || e.op === "peer_remove") {
    const delta = (e.user_ids?.length ?? 0) * (e.op === "peer_add" ? 1 : -1);
    const next = new Map(channels.value);
    for (const id of e.stream_ids ?? []) {
      const old = next.get(id);
      if (old?.subscriber_count !== undefined)
        next.set(id, { ...old, subscriber_count: Math.max(0, old.subscriber_count + delta) });
    }
    channels.value = next;
  }
});
