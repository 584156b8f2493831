/**
 * Automatic follow and unmute (zerver/lib/message.py visibility_policy_for_participation,
 * visibility_policy_for_send and visibility_policy_for_send_message): what a user's
 * `automatically_follow_topics_policy` and `automatically_unmute_topics_in_muted_streams_policy`
 * make of their sending a message to, or otherwise taking part in, a channel topic. The policies
 * only ever raise a topic's visibility: a followed topic stays followed.
 */
import type { UserProfile } from "../../db/index.ts";
import { TopicVisibility } from "./topics.ts";

/** UserProfile.AUTOMATICALLY_CHANGE_VISIBILITY_POLICY_*. */
export const AutomaticPolicy = {
  ON_PARTICIPATION: 1,
  ON_SEND: 2,
  ON_INITIATION: 3,
  NEVER: 4,
} as const;

export type AutomaticPolicies = Pick<
  UserProfile,
  "automaticallyFollowTopicsPolicy" | "automaticallyUnmuteTopicsInMutedStreamsPolicy"
>;

/** Whether either policy could change anything for a human sender (set_visibility_policy_possible, less the channel test). */
export function mayChangeVisibility(user: AutomaticPolicies & Pick<UserProfile, "isBot">): boolean {
  return (
    !user.isBot &&
    !(
      user.automaticallyFollowTopicsPolicy === AutomaticPolicy.NEVER &&
      user.automaticallyUnmuteTopicsInMutedStreamsPolicy === AutomaticPolicy.NEVER
    )
  );
}

/** Whether a send may need to know if the topic existed before it (ON_INITIATION). */
export const dependsOnInitiation = (user: AutomaticPolicies) =>
  user.automaticallyFollowTopicsPolicy === AutomaticPolicy.ON_INITIATION ||
  user.automaticallyUnmuteTopicsInMutedStreamsPolicy === AutomaticPolicy.ON_INITIATION;

/** The policy that one of the two settings asks for `when` this kind of action happens. */
function policyOn(user: AutomaticPolicies, when: number, channelMuted: boolean): number | null {
  if (user.automaticallyFollowTopicsPolicy === when) return TopicVisibility.FOLLOWED;
  if (channelMuted && user.automaticallyUnmuteTopicsInMutedStreamsPolicy === when)
    return TopicVisibility.UNMUTED;
  return null;
}

/**
 * Taking part in a topic other than by sending (a reaction, a poll vote): the new policy, or null
 * when it would not raise the current one.
 */
export function policyForParticipation(
  user: AutomaticPolicies,
  channelMuted: boolean,
  current: number,
): number | null {
  const wanted = policyOn(user, AutomaticPolicy.ON_PARTICIPATION, channelMuted);
  if (wanted === null || current === wanted || current === TopicVisibility.FOLLOWED) return null;
  return wanted;
}

/**
 * Sending a message to a topic (which is taking part in it too): FOLLOWED before UNMUTED; the
 * initiation settings count only when the sender had no policy for the topic and could see no
 * earlier message in it (`topicExisted`, read only then).
 */
export function policyForSendMessage(
  sender: AutomaticPolicies,
  channelMuted: boolean,
  current: number,
  topicExisted: boolean,
): number | null {
  if (current === TopicVisibility.FOLLOWED) return null;
  const asked = [
    policyOn(sender, AutomaticPolicy.ON_PARTICIPATION, channelMuted),
    policyOn(sender, AutomaticPolicy.ON_SEND, channelMuted),
  ];
  if (asked.includes(TopicVisibility.FOLLOWED)) return TopicVisibility.FOLLOWED;
  let policy: number | null = asked.includes(TopicVisibility.UNMUTED)
    ? TopicVisibility.UNMUTED
    : null;
  // A topic with a policy set was not started by this message.
  if (current !== TopicVisibility.INHERIT) return policy === current ? null : policy;
  if (topicExisted) return policy;
  if (sender.automaticallyFollowTopicsPolicy === AutomaticPolicy.ON_INITIATION)
    return TopicVisibility.FOLLOWED;
  if (
    channelMuted &&
    sender.automaticallyUnmuteTopicsInMutedStreamsPolicy === AutomaticPolicy.ON_INITIATION
  )
    policy = TopicVisibility.UNMUTED;
  return policy;
}
