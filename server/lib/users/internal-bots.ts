/**
 * The organization's internal bots (Zulip's REALM_INTERNAL_BOTS: settings.NOTIFICATION_BOT and
 * settings.WELCOME_BOT). Every organization is created with them (actions/realm/realm.ts
 * doCreateOrganization, manage/populate-db.ts), so sending as one of them is a read, never a
 * user creation in the middle of another action.
 */
import { Role } from "./users.ts";

export interface InternalBotSpec {
  email: string;
  fullName: string;
  role: number;
  isBot: true;
  botType: number;
}

/** Zulip's settings.NOTIFICATION_BOT. */
export const NOTIFICATION_BOT: InternalBotSpec = {
  email: "notification-bot@zulip.com",
  fullName: "Notification Bot",
  role: Role.MEMBER,
  isBot: true,
  botType: 1,
};
export const NOTIFICATION_BOT_EMAIL = NOTIFICATION_BOT.email;

/** Zulip's settings.WELCOME_BOT. */
export const WELCOME_BOT: InternalBotSpec = {
  email: "welcome-bot@zulip.com",
  fullName: "Welcome Bot",
  role: Role.MEMBER,
  isBot: true,
  botType: 1,
};

/** What a new organization is created with, in this order. */
export const INTERNAL_BOTS = [NOTIFICATION_BOT, WELCOME_BOT] as const;
