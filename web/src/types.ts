/** The spec's types the web app reads, by the names it uses (all generated from openapi/). */
import type {
  components,
  RegisterState,
  ZulipEvent,
  ZulipEventOf,
} from "../../client/src/index.ts";

type Schemas = components["schemas"];
export type Msg = Schemas["Message"];
export type User = Schemas["User"];
export type Subscription = Schemas["Subscription"];
export type Reaction = Schemas["Reaction"];
export type NarrowTerm = Schemas["NarrowTerm"];
export type { RegisterState, ZulipEvent, ZulipEventOf };

/**
 * Register sections the spec leaves open (`additionalProperties`), as Zulip's register documents
 * them (zulip-openapi.yaml): read through these names only.
 */
export interface UnreadMsgs {
  pms: { other_user_id: number; unread_message_ids: number[] }[];
  streams: { stream_id: number; topic: string; unread_message_ids: number[] }[];
  huddles: { user_ids_string: string; unread_message_ids: number[] }[];
  mentions: number[];
}
export interface PresenceTimes {
  active_timestamp: number;
  idle_timestamp: number;
}
export interface RecentConversation {
  max_message_id: number;
  user_ids: number[];
}
