/**
 * A user's settings for channels they are subscribed to (zerver/views/streams.py
 * update_subscription_properties_backend, zerver/actions/subscription_settings.py
 * do_change_subscription_property): every change checked before any is written, all in one
 * transaction, one `subscription` update event per change (two for is_muted / in_home_view).
 */
import type { RequestContext } from "../../context.ts";
import { JsonableError } from "../../errors.ts";
import { findChannelsById } from "../../lib/channels/channels.ts";
import { accessChannels } from "../../lib/access/channels.ts";
import { inTransaction } from "../transaction.ts";

/** Subscription.PROPERTY_TYPES: the API name → the column. */
const PROPERTIES = {
  color: "color",
  is_muted: "isMuted",
  in_home_view: "isMuted",
  pin_to_top: "pinToTop",
  desktop_notifications: "desktopNotifications",
  audible_notifications: "audibleNotifications",
  push_notifications: "pushNotifications",
  email_notifications: "emailNotifications",
  wildcard_mentions_notify: "wildcardMentionsNotify",
} as const;
type Property = keyof typeof PROPERTIES;

/** check_color: `#` and 3 or 6 hex digits. */
const HEX_COLOR = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i;

export interface PropertyChange {
  streamId: number;
  property: string;
  value: unknown;
}

/**
 * `describe(index, text)` words a bad value as the operation does: the single PATCH answers the
 * text itself, the bulk form prefixes "Invalid subscription_data[N]: Value error, ".
 */
export async function doUpdateSubscriptionProperties(
  ctx: RequestContext,
  changes: PropertyChange[],
  describe: (index: number, text: string) => string,
) {
  const checked: {
    stream: { id: number; recipientId: number };
    property: Property;
    value: string | boolean;
  }[] = [];
  // Every channel named, in one statement; access is then checked per change, in order.
  const channels = new Map(
    (
      await findChannelsById(
        ctx.db,
        ctx.realm.id,
        changes.map((c) => c.streamId),
      )
    ).map((s) => [s.id, s]),
  );
  const { inaccessible } = await accessChannels(ctx.db, ctx.user, channels.values());
  const denied = new Set(inaccessible.map((s) => s.id));
  for (const [index, change] of changes.entries()) {
    if (!(change.property in PROPERTIES))
      throw new JsonableError(`Unknown subscription property: ${change.property}`);
    const property = change.property as Property;
    const stream = channels.get(change.streamId);
    if (!stream || denied.has(stream.id)) throw new JsonableError("Invalid channel ID");
    if (!stream.subscriberIds.includes(ctx.user.id))
      throw new JsonableError(`Not subscribed to channel ID ${change.streamId}`);
    if (property === "color") {
      if (typeof change.value !== "string" || !HEX_COLOR.test(change.value))
        throw new JsonableError(describe(index, `${property} is not a valid hex color code`));
    } else if (typeof change.value !== "boolean")
      throw new JsonableError(describe(index, `${property} is not a boolean`));
    checked.push({ stream, property, value: change.value });
  }
  await inTransaction(ctx, ctx.realm.id, async ({ tx, events }) => {
    for (const { stream, property, value } of checked) {
      // in_home_view is the inverse of is_muted, which is what is stored.
      const stored = property === "in_home_view" ? !value : value;
      await tx.subscription.updateMany({
        where: { userProfileId: ctx.user.id, recipientId: stream.recipientId },
        data: { [PROPERTIES[property]]: stored },
      });
      if (PROPERTIES[property] === "isMuted") {
        events.add(
          {
            type: "subscription",
            op: "update",
            property: "in_home_view",
            value: !stored,
            stream_id: stream.id,
          },
          [ctx.user.id],
        );
        events.add(
          {
            type: "subscription",
            op: "update",
            property: "is_muted",
            value: stored,
            stream_id: stream.id,
          },
          [ctx.user.id],
        );
      } else
        events.add(
          { type: "subscription", op: "update", property, value: stored, stream_id: stream.id },
          [ctx.user.id],
        );
    }
  });
}
