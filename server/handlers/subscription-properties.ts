/** PATCH /users/me/subscriptions/{stream_id} and POST /users/me/subscriptions/properties. */
import { doUpdateSubscriptionProperties } from "../actions/channels/subscription-properties.ts";
import type { Handler } from "../http/types.ts";

export const updateSubscriptionProperty: Handler<"update-subscription-property"> = async (
  { path, body },
  ctx,
) => {
  await doUpdateSubscriptionProperties(
    ctx,
    [{ streamId: path.stream_id, property: body.property, value: body.value }],
    (_i, text) => text,
  );
  return {};
};

export const updateSubscriptionSettings: Handler<"update-subscription-settings"> = async (
  { body },
  ctx,
) => {
  const changes = body.subscription_data.map((c) => ({
    streamId: c.stream_id,
    property: c.property,
    value: c.value,
  }));
  await doUpdateSubscriptionProperties(
    ctx,
    changes,
    (i, text) => `Invalid subscription_data[${i}]: Value error, ${text}`,
  );
  return {};
};
