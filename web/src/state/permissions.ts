/**
 * What the user may do, from the register's group settings (the same ones the server checks):
 * `userInGroupSetting` over the user groups of state/groups.ts (members and subgroups, recursively), and the
 * message-level rules of server/lib/messages/message-delete.ts and
 * server/actions/messages/message-edit-checks.ts (Zulip's message_edit.py), each a pure function
 * of the register state kept here and of the message. Kept current by `realm` and
 * `realm_user` events (the groups by `user_group` events, in state/groups.ts).
 */
import { signal } from "@preact/signals";
import type { Msg } from "../types.ts";
import { onEvent, onRegister } from "./events.ts";
import { userInGroupSetting, type GroupSettingValue } from "./groups.ts";
import { me, subscriptions, users } from "./model.ts";

export { userInGroupSetting, type GroupSettingValue };

/** The organization's settings that the message actions read (Zulip's register names). */
export interface RealmRules {
  allowEditing: boolean;
  editLimit: number | null;
  deleteLimit: number | null;
  moveWithinLimit: number | null;
  moveBetweenLimit: number | null;
  historyPolicy: "all" | "moves" | "none";
  readReceipts: boolean;
  groups: Record<string, GroupSettingValue | undefined>;
}

const REALM_GROUP_SETTINGS = [
  "can_delete_any_message_group",
  "can_delete_own_message_group",
  "can_move_messages_between_channels_group",
  "can_move_messages_between_topics_group",
  "can_resolve_topics_group",
] as const;
type RealmGroupSetting = (typeof REALM_GROUP_SETTINGS)[number];

export const rules = signal<RealmRules>({
  allowEditing: true,
  editLimit: null,
  deleteLimit: null,
  moveWithinLimit: null,
  moveBetweenLimit: null,
  historyPolicy: "all",
  readReceipts: true,
  groups: {},
});

const limit = (v: unknown): number | null => (typeof v === "number" && v > 0 ? v : null);

onRegister((state) => {
  const values: RealmRules["groups"] = {};
  for (const name of REALM_GROUP_SETTINGS)
    values[name] = state[`realm_${name}`] as GroupSettingValue | undefined;
  const policy = state.realm_message_edit_history_visibility_policy;
  rules.value = {
    allowEditing: state.realm_allow_message_editing !== false,
    editLimit: limit(state.realm_message_content_edit_limit_seconds),
    deleteLimit: limit(state.realm_message_content_delete_limit_seconds),
    moveWithinLimit: limit(state.realm_move_messages_within_stream_limit_seconds),
    moveBetweenLimit: limit(state.realm_move_messages_between_streams_limit_seconds),
    historyPolicy: policy === "moves" || policy === "none" ? policy : "all",
    readReceipts: state.realm_enable_read_receipts !== false,
    groups: values,
  };
});

const SETTING_KEYS: Record<string, keyof RealmRules> = {
  allow_message_editing: "allowEditing",
  message_content_edit_limit_seconds: "editLimit",
  message_content_delete_limit_seconds: "deleteLimit",
  move_messages_within_stream_limit_seconds: "moveWithinLimit",
  move_messages_between_streams_limit_seconds: "moveBetweenLimit",
  message_edit_history_visibility_policy: "historyPolicy",
  enable_read_receipts: "readReceipts",
};

onEvent("realm", (event) => {
  const e = event as { op: string; property?: string; value?: unknown; data?: object };
  const data: Record<string, unknown> =
    e.op === "update" && e.property ? { [e.property]: e.value } : { ...(e.data ?? {}) };
  let next: RealmRules | undefined;
  for (const [key, value] of Object.entries(data)) {
    next ??= { ...rules.value, groups: { ...rules.value.groups } };
    if ((REALM_GROUP_SETTINGS as readonly string[]).includes(key))
      next.groups[key] = value as GroupSettingValue;
    else if (key in SETTING_KEYS) {
      const field = SETTING_KEYS[key]!;
      (next as unknown as Record<string, unknown>)[field] =
        field === "allowEditing" || field === "readReceipts"
          ? value !== false
          : field === "historyPolicy"
            ? value
            : limit(value);
    }
  }
  if (next) rules.value = next;
});

const ROLE_MODERATOR = 300;
const ROLE_GUEST = 600;

function myRole(): number {
  return users.value.get(me.value.id)?.role ?? 400;
}
/** Guests hold no setting that may not be `role:everyone` (the message settings are such). */
function holds(value: GroupSettingValue | undefined | null): boolean {
  return myRole() !== ROLE_GUEST && userInGroupSetting(value, me.value.id);
}
function realmHolds(name: RealmGroupSetting): boolean {
  return holds(rules.value.groups[name]);
}
function channelOf(m: Msg) {
  return m.type === "stream" && m.stream_id !== undefined
    ? (subscriptions.value.get(m.stream_id) as unknown as
        Record<string, GroupSettingValue | undefined> | undefined)
    : undefined;
}
function channelHolds(m: Msg, name: string): boolean {
  return holds(channelOf(m)?.[name]);
}
/** Zulip lets an edit through a little past each limit; the UI offers it up to the limit. */
function within(m: Msg, seconds: number | null, now: number): boolean {
  return seconds === null || now - m.timestamp < seconds;
}
const nowSeconds = () => Date.now() / 1000;
const isModerator = () => myRole() <= ROLE_MODERATOR;
const isMine = (m: Msg) =>
  m.sender_id === me.value.id || users.value.get(m.sender_id)?.bot_owner_id === me.value.id;

/** validate_user_can_edit_message: editing on, my message, the content limit not passed. */
export function canEditContent(m: Msg, now = nowSeconds()): boolean {
  const r = rules.value;
  return r.allowEditing && m.sender_id === me.value.id && within(m, r.editLimit, now);
}

/** checkCanDeleteMessage. */
export function canDelete(m: Msg, now = nowSeconds()): boolean {
  if (realmHolds("can_delete_any_message_group")) return true;
  if (channelHolds(m, "can_delete_any_message_group")) return true;
  if (!isMine(m)) return false;
  if (
    !realmHolds("can_delete_own_message_group") &&
    !channelHolds(m, "can_delete_own_message_group")
  )
    return false;
  return within(m, rules.value.deleteLimit, now);
}

function canAdministerChannel(m: Msg): boolean {
  return me.value.isAdmin || channelHolds(m, "can_administer_channel_group");
}

/** can_edit_topic and the topic-move time limit. */
export function canMoveTopic(m: Msg, now = nowSeconds()): boolean {
  if (m.type !== "stream") return false;
  const allowed =
    realmHolds("can_move_messages_between_topics_group") ||
    canAdministerChannel(m) ||
    channelHolds(m, "can_move_messages_within_channel_group");
  return allowed && (isModerator() || within(m, rules.value.moveWithinLimit, now));
}

/** can_move_messages_out_of_channel and its time limit. */
export function canMoveChannel(m: Msg, now = nowSeconds()): boolean {
  if (m.type !== "stream") return false;
  const allowed =
    canAdministerChannel(m) ||
    realmHolds("can_move_messages_between_channels_group") ||
    channelHolds(m, "can_move_messages_out_of_channel_group");
  return allowed && (isModerator() || within(m, rules.value.moveBetweenLimit, now));
}

/** can_resolve_topics (the organization's or the channel's). */
export function canResolve(m: Msg): boolean {
  return (
    m.type === "stream" &&
    (realmHolds("can_resolve_topics_group") || channelHolds(m, "can_resolve_topics_group"))
  );
}

/** Whether "View edit history" applies: the message changed, and the policy shows that change. */
export function canSeeHistory(m: Msg): boolean {
  const policy = rules.value.historyPolicy;
  const moved = m.last_moved_timestamp !== undefined && m.last_moved_timestamp !== null;
  const edited = m.last_edit_timestamp !== undefined && m.last_edit_timestamp !== null;
  if (policy === "none") return false;
  if (policy === "moves") return moved;
  return moved || edited;
}

export function readReceiptsEnabled(): boolean {
  return rules.value.readReceipts;
}
