/**
 * The weekly digest email, as Zulip's zerver/lib/digest.py chooses its content and its templates
 * (templates/zerver/emails/digest.*) write it: the hottest conversations of the user's channels
 * (the two with the most people talking, then the longest, four at most), each with its first two
 * messages and "+ N more messages by …", then the channels created since; with message content
 * hidden (the user's or the organization's setting) only how many new messages and channels
 * there are. The foot links the notification settings and a one-click unsubscribe (also as
 * List-Unsubscribe).
 */
import type { OutgoingEmail } from "../../actions/email/outbox.ts";
import { escapeAttr, escapeText } from "../markdown/text.ts";
import { encodeChannel, encodeHashComponent } from "../messages/message-links.ts";
import { emailHtml, emailText, type EmailRealm } from "./missed-message-email.ts";

/** Zulip's DIGEST_CUTOFF: a digest covers, and goes to users inactive for, this many days. */
export const DIGEST_CUTOFF_DAYS = 5;
/** MAX_HOT_TOPICS_TO_BE_INCLUDED_IN_DIGEST. */
const MAX_HOT_TOPICS = 4;
/** The two most diverse topics come first (get_hot_topics). */
const MOST_DIVERSE = 2;

export interface DigestMessage {
  senderName: string;
  content: string;
  renderedContent: string;
}

/** A topic of the user's channels since the cutoff (DigestTopic). */
export interface DigestTopic {
  streamId: number;
  streamName: string;
  topic: string;
  /** Messages by people (bots' do not count). */
  length: number;
  /** The people who wrote in it, by name, sorted. */
  participants: string[];
  /** Its first two messages, whoever sent them (ids, then loaded for the chosen topics). */
  sampleIds: number[];
}

/**
 * get_hot_topics: the two topics with the most people talking, then the longest ones, up to
 * four. `topics` in a stable order (channel, then first message): ties keep it, as heapq.nlargest
 * keeps its input's order.
 */
export function hotTopics(topics: DigestTopic[]): DigestTopic[] {
  const by = (key: (t: DigestTopic) => number) =>
    topics
      .map((t, i) => ({ t, i }))
      .sort((a, b) => key(b.t) - key(a.t) || a.i - b.i)
      .map(({ t }) => t);
  const hot = by((t) => t.participants.length).slice(0, MOST_DIVERSE);
  for (const t of by((t) => t.length).slice(0, MAX_HOT_TOPICS)) {
    if (hot.length >= MAX_HOT_TOPICS) break;
    if (!hot.includes(t)) hot.push(t);
  }
  return hot;
}

/**
 * Zulip's display_list template filter: "A", "A and B", "A, B and C", and past `limit` values
 * "A, B, C, D and 2 others".
 */
export function displayList(values: string[], limit: number): string {
  if (values.length === 1) return values[0]!;
  if (values.length <= limit) return `${values.slice(0, -1).join(", ")} and ${values.at(-1)}`;
  const others = values.length - limit;
  return `${values.slice(0, limit).join(", ")} and ${others} other${others === 1 ? "" : "s"}`;
}

/** enough_traffic: a digest with nothing in it is not sent. */
export function enoughTraffic(
  hotConversations: number,
  newChannels: number,
  newMessages: number,
  showContent: boolean,
): boolean {
  if (newChannels > 0) return true;
  if (!showContent) return newMessages > 0;
  return hotConversations > 0;
}

export interface DigestInput {
  user: { deliveryEmail: string };
  realm: EmailRealm;
  /** The hot topics with their sample messages; empty when content is hidden. */
  hot: (DigestTopic & { samples: DigestMessage[] })[];
  newChannels: { id: number; name: string }[];
  /** Messages from people since the cutoff, said instead of the topics when content is hidden. */
  newMessages: number;
  /** Why content is hidden, if it is: the organization's setting, else the user's. */
  contentHiddenBy: "realm" | "user" | null;
  unsubscribeUrl: string;
  noreplyAddress: string;
}

const channelUrl = (realm: EmailRealm, id: number, name: string) =>
  `${realm.url}/#narrow/channel/${encodeChannel(id, name)}`;

/** The digest email (bulk_handle_digest_email's send_future_email of zerver/emails/digest). */
export function digestEmail(input: DigestInput): OutgoingEmail {
  const { realm } = input;
  const text: string[] = [];
  const html: string[] = [];
  if (input.contentHiddenBy === null) {
    for (const convo of input.hot) {
      const topicUrl = `${channelUrl(realm, convo.streamId, convo.streamName)}/topic/${encodeHashComponent(convo.topic)}`;
      text.push(`${convo.streamName} > ${convo.topic}`);
      html.push(
        `<div class="messages"><div class="hot_convo_recipient_header"><a href="${escapeAttr(channelUrl(realm, convo.streamId, convo.streamName))}">${escapeText(convo.streamName)}</a> &gt; <a href="${escapeAttr(topicUrl)}">${escapeText(convo.topic)}</a></div>`,
      );
      // build_message_list: a run of one sender's messages under their name once.
      let previous: string | null = null;
      for (const m of convo.samples) {
        const named = m.senderName !== previous;
        previous = m.senderName;
        text.push(
          named
            ? `${m.senderName}:\n${emailText(m.content, realm.url)}`
            : emailText(m.content, realm.url),
        );
        html.push(
          `<div class="hot_convo_message_content_block">${named ? `<b>${escapeText(m.senderName)}</b>: ` : ""}${emailHtml(m.renderedContent, realm.url)}</div>`,
        );
      }
      // teaser_data: the people's messages beyond the samples.
      const more = convo.length - convo.samples.length;
      if (more > 0) {
        const line = `+ ${more} more message${more === 1 ? "" : "s"} by ${displayList(convo.participants, 4)}.`;
        text.push(line);
        html.push(`<p class="digest_paragraph">${escapeText(line)}</p>`);
      }
      text.push("");
      html.push("</div>");
    }
    if (input.newChannels.length) {
      text.push(
        "** New channels **",
        `    ${displayList(
          input.newChannels.map((c) => c.name),
          1000,
        )}.`,
        "",
      );
      const links = input.newChannels.map(
        (c) => `<a href="${escapeAttr(channelUrl(realm, c.id, c.name))}">${escapeText(c.name)}</a>`,
      );
      html.push(
        `<p class="digest_paragraph"><b>New channels</b></p>`,
        `<p class="digest_paragraph">${displayList(links, 1000)}.</p>`,
      );
    }
  } else {
    const messages = input.newMessages;
    const channels = input.newChannels.length;
    const summary =
      messages > 0 && channels > 0
        ? `You have ${messages} new messages, and there are ${channels} new channels in ${realm.name}.`
        : messages > 0
          ? `You have ${messages} new messages in ${realm.name}.`
          : `There are ${channels} new channels in ${realm.name}.`;
    const why =
      input.contentHiddenBy === "realm"
        ? `This email does not include message content because your organization hides message content in email notifications. See ${realm.url}/help/hide-message-content-in-emails for more details.`
        : `This email does not include message content because you have chosen to hide message content in email notifications. See ${realm.url}/help/email-notifications#hide-message-content for more details.`;
    text.push(summary, "", why, "");
    html.push(
      `<p class="digest_paragraph">${escapeText(summary)}</p>`,
      `<p class="digest_paragraph">${escapeText(why)}</p>`,
    );
  }
  text.push(
    `Log in to Zulip to catch up: ${realm.url}.`,
    "",
    "--",
    "Manage email preferences:",
    "",
    `${realm.url}/#settings/notifications`,
    "",
    "Unsubscribe from digest emails:",
    "",
    input.unsubscribeUrl,
    "",
  );
  html.push(
    `<p class="digest_paragraph"><a href="${escapeAttr(realm.url)}">Log in</a> to Zulip to catch up.</p>`,
    `<p class="digest_paragraph"><a href="${escapeAttr(`${realm.url}/#settings/notifications`)}">Manage email preferences</a> | <a href="${escapeAttr(input.unsubscribeUrl)}">Unsubscribe from digest emails</a></p>`,
  );
  return {
    realmId: realm.id,
    to: input.user.deliveryEmail,
    from: `"Zulip digest" <${input.noreplyAddress}>`,
    subject: `Zulip digest for ${realm.name}`,
    text: text.join("\n"),
    html: html.join("\n"),
    template: "zerver/emails/digest",
    headers: {
      "List-Unsubscribe": `<${input.unsubscribeUrl}>`,
      "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    },
  };
}
