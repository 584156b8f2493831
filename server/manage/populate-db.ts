/**
 * The development organization tests and demos use, modelled on Zulip's own
 * (zilencer/management/commands/populate_db.py): its users, bots, channels and a few messages.
 */
import { randomBytes } from "node:crypto";
import { doCreateChannel } from "../actions/channels/channels.ts";
import { doSubscribe } from "../actions/channels/subscriptions.ts";
import { NOTIFICATION_BOT } from "../lib/users/internal-bots.ts";
import { checkSendMessage } from "../actions/messages/messages.ts";
import { doCreateRealm } from "../actions/realm/realm.ts";
import { doCreateUser } from "../actions/users/users.ts";
import type { AppDeps } from "../context.ts";
import { JsonableError } from "../errors.ts";
import { hashPassword } from "../lib/auth/passwords.ts";
import { fakeEmailDomain, realmHost } from "../lib/realm/realm.ts";
import { Role } from "../lib/users/users.ts";
import { actAs } from "./context.ts";

export interface Credential {
  user_id: number;
  email: string;
  full_name: string;
  role: number;
  api_key: string;
  password: string | null;
}

/** The organization as a credentials file names it. */
export interface RealmCredential {
  id: number;
  name: string;
  string_id: string;
  host: string;
}

export async function realmCredential(
  deps: AppDeps,
  realm: { id: number; name: string; stringId: string },
): Promise<RealmCredential> {
  return {
    id: realm.id,
    name: realm.name,
    string_id: realm.stringId,
    host: await realmHost(deps.db, realm, deps.config),
  };
}

/** A user as a credentials file lists them (a password only where one was set). */
export function credentialOf(
  u: { id: number; deliveryEmail: string; fullName: string; role: number; apiKey: string },
  password: string | null = null,
): Credential {
  return {
    user_id: u.id,
    email: u.deliveryEmail,
    full_name: u.fullName,
    role: u.role,
    api_key: u.apiKey,
    password,
  };
}

export interface DevCredentials {
  realm: RealmCredential;
  users: Record<string, Credential>;
  bots: Record<string, Credential>;
  channels: Record<string, { stream_id: number }>;
}

const HUMANS: [email: string, fullName: string, role: number][] = [
  ["desdemona@zulip.com", "Desdemona", Role.OWNER],
  ["iago@zulip.com", "Iago", Role.ADMINISTRATOR],
  ["shiva@zulip.com", "Shiva", Role.MODERATOR],
  ["hamlet@zulip.com", "King Hamlet", Role.MEMBER],
  ["othello@zulip.com", "Othello, the Moor of Venice", Role.MEMBER],
  ["cordelia@zulip.com", "Cordelia, Lear's daughter", Role.MEMBER],
  ["aaron@zulip.com", "aaron", Role.MEMBER],
  ["prospero@zulip.com", "Prospero from The Tempest", Role.MEMBER],
  ["polonius@zulip.com", "Polonius", Role.GUEST],
];

const CHANNELS: [
  name: string,
  description: string,
  inviteOnly: boolean,
  members: string[] | "all",
][] = [
  ["Verona", "A city in Italy", false, "all"],
  ["Denmark", "A Scandinavian country", false, "all"],
  ["Scotland", "Where the Macbeths live", false, ["iago", "othello", "hamlet", "shiva"]],
  ["Venice", "A northeastern Italian city", false, ["iago", "othello", "prospero"]],
  ["Rome", "Yet another Italian city", false, ["iago", "cordelia", "hamlet"]],
  ["core team", "A private channel for the core team", true, ["desdemona", "iago"]],
];

const MESSAGES: [sender: string, topic: string, content: string][] = [
  ["hamlet", "greetings", "Hello, Verona! :wave:"],
  ["othello", "greetings", "Hi @**King Hamlet**, welcome to **Verona**."],
  ["iago", "plans", "Let's meet in #**Denmark** tomorrow.\n\n* bring the map\n* bring `tea`"],
  ["cordelia", "plans", "Sounds good to me."],
];

const shortName = (email: string) => email.split("@")[0]!;

export async function populateDevRealm(deps: AppDeps): Promise<DevCredentials> {
  if ((await deps.db.realm.count()) > 0)
    throw new JsonableError(
      "populate-db needs an empty database, and this one already has an organization.",
    );
  const passwords = new Map(HUMANS.map(([email]) => [email, randomBytes(9).toString("base64url")]));
  const hashes = new Map(
    await Promise.all(
      HUMANS.map(async ([email]) => [email, await hashPassword(passwords.get(email)!)] as const),
    ),
  );

  const { realm, users, bots, channels } = await deps.db.$transaction(
    async (tx) => {
      const realm = await doCreateRealm(tx, {
        name: "Zulip Dev",
        stringId: "zulip",
        description: "The Zulip development environment.",
      });
      const domain = await fakeEmailDomain(tx, realm, deps.config);
      const users = [];
      for (const [email, fullName, role] of HUMANS)
        users.push(
          await doCreateUser(
            tx,
            realm,
            { email, fullName, role, passwordHash: hashes.get(email)! },
            domain,
          ),
        );
      const hamlet = users.find((u) => u.deliveryEmail === "hamlet@zulip.com")!;
      const bots = [
        await doCreateUser(
          tx,
          realm,
          {
            email: "default-bot@zulip.com",
            fullName: "Zulip Default Bot",
            role: Role.MEMBER,
            isBot: true,
            botType: 1,
            botOwnerId: hamlet.id,
          },
          domain,
        ),
        await doCreateUser(tx, realm, NOTIFICATION_BOT, domain),
      ];
      const channels = [];
      for (const [name, description, inviteOnly, members] of CHANNELS) {
        const stream = await doCreateChannel(tx, realm.id, {
          name,
          description,
          inviteOnly,
          creatorId: users[0]!.id,
        });
        const ids =
          members === "all"
            ? users.map((u) => u.id)
            : users.filter((u) => members.includes(shortName(u.deliveryEmail))).map((u) => u.id);
        await doSubscribe(tx, realm.id, stream, ids);
        channels.push(stream);
      }
      // As in Zulip's development organization, new channels are announced in Verona.
      await tx.realm.update({
        where: { id: realm.id },
        data: { newStreamAnnouncementsStreamId: channels.find((c) => c.name === "Verona")!.id },
      });
      return { realm, users, bots, channels };
    },
    { timeout: 60_000 },
  );

  for (const [sender, topic, content] of MESSAGES) {
    const user = users.find((u) => shortName(u.deliveryEmail) === sender)!;
    await checkSendMessage(actAs(deps, realm, user), {
      target: { kind: "channel", streamName: "Verona", topic },
      content,
      clientName: "populate_db",
    });
  }

  // The organization's history is nobody's news: Zulip's populate_db creates it in bulk, with no
  // notifications, and a followed topic's would otherwise be emailed two minutes later.
  await deps.db.scheduledMessageNotificationEmail.deleteMany({
    where: { userProfile: { realmId: realm.id } },
  });

  const credential = (u: (typeof users)[number]) =>
    credentialOf(u, passwords.get(u.deliveryEmail) ?? null);
  return {
    realm: await realmCredential(deps, realm),
    users: Object.fromEntries(users.map((u) => [shortName(u.deliveryEmail), credential(u)])),
    bots: Object.fromEntries(bots.map((b) => [shortName(b.deliveryEmail), credential(b)])),
    channels: Object.fromEntries(channels.map((c) => [c.name, { stream_id: c.id }])),
  };
}
