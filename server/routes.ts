/**
 * operationId → handler. Routes are registered from the spec, never by hand: an operation
 * without a handler, or a handler without an operation, is a type error (`satisfies
 * HandlerMap`) and fails test/conformance/parity.test.ts.
 */
import type { NextFunction, Request, Response } from "express";
import type { AppDeps, PublicContext, RequestContext } from "./context.ts";
import { ignoredParameters, jsonSuccess } from "./http/envelope.ts";
import { refuseInexactNumbers, sentQuery } from "./http/form.ts";
import { operationFor, type LoadedSpec } from "./http/spec.ts";
import { requestCounter } from "./http/auth.ts";
import { countStatements } from "./db/statements.ts";
import type { Handler, HandlerMap } from "./http/types.ts";
import { fetchApiKey } from "./handlers/api-keys.ts";
import { getBotStorage, removeBotStorage, updateBotStorage } from "./handlers/bot-storage.ts";
import { getAttachments, removeAttachment } from "./handlers/attachments.ts";
import {
  createInviteLink,
  getInvites,
  resendEmailInvite,
  revokeEmailInvite,
  revokeInviteLink,
  sendInvites,
} from "./handlers/invites.ts";
import { deleteQueue, getEvents, registerQueue } from "./handlers/events.ts";
import {
  checkMessagesMatchNarrow,
  getMessage,
  getMessages,
  sendMessage,
} from "./handlers/messages.ts";
import { getMessageHistory, updateMessage } from "./handlers/message-edit.ts";
import { reportMessage } from "./handlers/message-reports.ts";
import {
  createScheduledMessage,
  deleteScheduledMessage,
  getScheduledMessages,
  updateScheduledMessage,
} from "./handlers/scheduled-messages.ts";
import { createMessageReminder, deleteReminder, getReminders } from "./handlers/reminders.ts";
import { testWelcomeBotCustomMessage, updateRealm } from "./handlers/realm.ts";
import { getServerSettings } from "./handlers/server-settings.ts";
import { getFileTemporaryUrl, uploadFile } from "./handlers/uploads.ts";
import {
  createUser,
  getOwnUser,
  getUserByEmail,
  getUsers,
  updateUser,
  updateUserByEmail,
} from "./handlers/users.ts";
import { getUserStatus, updateStatus, updateStatusForUser } from "./handlers/user-status.ts";
import { addReaction, removeReaction } from "./handlers/reactions.ts";
import { createSubmessage } from "./handlers/submessages.ts";
import {
  deactivateCustomEmoji,
  getCustomEmoji,
  uploadCustomEmoji,
} from "./handlers/realm-emoji.ts";
import { deleteAvatar, uploadAvatar } from "./handlers/avatar.ts";
import {
  e2eeTestNotify,
  registerClientDevice,
  registerPushDevice,
  removeClientDevice,
  addApnsToken,
  removeApnsToken,
  addFcmToken,
  removeFcmToken,
  testNotify,
} from "./handlers/push.ts";
import { setTypingStatus, setTypingStatusForMessageEdit } from "./handlers/typing.ts";
import { getPresence, getUserPresence, updatePresence } from "./handlers/presence.ts";
import { devFetchApiKey } from "./handlers/dev-login.ts";
import { addCodePlayground, removeCodePlayground } from "./handlers/playgrounds.ts";
import {
  deleteRealmExport,
  exportRealm,
  getRealmExportConsents,
  getRealmExports,
} from "./handlers/export.ts";
import {
  createBigBlueButtonVideoCall,
  createVideoCall,
  createWebexVideoCall,
} from "./handlers/video-calls.ts";
import {
  createCustomProfileField,
  deleteCustomProfileField,
  getCustomProfileFields,
  removeCustomProfileData,
  reorderCustomProfileFields,
  updateCustomProfileData,
  updateCustomProfileField,
} from "./handlers/custom-profile-fields.ts";
import {
  createChannel,
  getStreamById,
  getStreamId,
  getStreams,
  getSubscribers,
  getStreamEmailAddress,
} from "./handlers/channels.ts";
import {
  getSubscriptions,
  getSubscriptionStatus,
  getUserChannels,
  subscribe,
  unsubscribe,
  updateSubscriptions,
} from "./handlers/subscriptions.ts";
import { archiveStream, updateStream } from "./handlers/channel-settings.ts";
import {
  createChannelFolder,
  getChannelFolders,
  patchChannelFolders,
  updateChannelFolder,
} from "./handlers/channel-folders.ts";
import { addDefaultStream, removeDefaultStream } from "./handlers/default-streams.ts";
import { muteTopic, updateUserTopic } from "./handlers/user-topics.ts";
import {
  createUserGroup,
  deactivateGroup,
  getIsUserGroupMember,
  getUserGroupMembers,
  getUserGroups,
  getUserGroupSubgroups,
  updateUserGroup,
  updateUserGroupMembers,
  updateUserGroupSubgroups,
} from "./handlers/user-groups.ts";
import {
  updateSubscriptionProperty,
  updateSubscriptionSettings,
} from "./handlers/subscription-properties.ts";
import {
  deactivateOwnUser,
  deactivateUser,
  reactivateUser,
  regenerateApiKey,
} from "./handlers/user-deactivation.ts";
import { createBot, deactivateBot, getBotApiKey, getBots, updateBot } from "./handlers/bots.ts";
import { createDrafts, deleteDraft, editDraft, getDrafts } from "./handlers/drafts.ts";
import {
  createSavedSnippet,
  deleteSavedSnippet,
  editSavedSnippet,
  getSavedSnippets,
} from "./handlers/saved-snippets.ts";
import {
  addNavigationView,
  editNavigationView,
  getNavigationViews,
  removeNavigationView,
} from "./handlers/navigation-views.ts";
import {
  updateDisplaySettings,
  updateNotificationSettings,
  updateSettings,
} from "./handlers/settings.ts";
import { updateRealmUserSettingsDefaults } from "./handlers/realm-user-settings-defaults.ts";
import { getStreamTopics } from "./handlers/topics.ts";
import { renderMessage } from "./handlers/message-render.ts";
import {
  addLinkifier,
  getLinkifiers,
  removeLinkifier,
  reorderLinkifiers,
  updateLinkifier,
} from "./handlers/linkifiers.ts";
import {
  markAllAsRead,
  markStreamAsRead,
  markTopicAsRead,
  updateMessageFlags,
  updateMessageFlagsForNarrow,
} from "./handlers/message-flags.ts";
import { getReadReceipts } from "./handlers/read-receipts.ts";
import { deleteMessage, deleteTopic } from "./handlers/message-delete.ts";
import { addAlertWords, getAlertWords, removeAlertWords } from "./handlers/alert-words.ts";
import { muteUser, unmuteUser } from "./handlers/muted-users.ts";

export const handlers = {
  "get-server-settings": getServerSettings,
  "fetch-api-key": fetchApiKey,
  "register-queue": registerQueue,
  "get-events": getEvents,
  "delete-queue": deleteQueue,
  "set-typing-status": setTypingStatus,
  "set-typing-status-for-message-edit": setTypingStatusForMessageEdit,
  "get-messages": getMessages,
  "send-message": sendMessage,
  "check-messages-match-narrow": checkMessagesMatchNarrow,
  "get-message": getMessage,
  "update-message": updateMessage,
  "get-message-history": getMessageHistory,
  "report-message": reportMessage,
  "create-scheduled-message": createScheduledMessage,
  "get-scheduled-messages": getScheduledMessages,
  "update-scheduled-message": updateScheduledMessage,
  "delete-scheduled-message": deleteScheduledMessage,
  "create-message-reminder": createMessageReminder,
  "get-reminders": getReminders,
  "delete-reminder": deleteReminder,
  "edit-draft": editDraft,
  "get-drafts": getDrafts,
  "create-drafts": createDrafts,
  "delete-draft": deleteDraft,
  "update-bot-storage": updateBotStorage,
  "get-bot-storage": getBotStorage,
  "remove-bot-storage": removeBotStorage,
  "get-saved-snippets": getSavedSnippets,
  "create-saved-snippet": createSavedSnippet,
  "edit-saved-snippet": editSavedSnippet,
  "delete-saved-snippet": deleteSavedSnippet,
  "get-navigation-views": getNavigationViews,
  "add-navigation-view": addNavigationView,
  "edit-navigation-view": editNavigationView,
  "remove-navigation-view": removeNavigationView,
  "get-attachments": getAttachments,
  "remove-attachment": removeAttachment,
  "update-settings": updateSettings,
  "update-notification-settings": updateNotificationSettings,
  "update-display-settings": updateDisplaySettings,
  "update-realm-user-settings-defaults": updateRealmUserSettingsDefaults,
  "create-channel": createChannel,
  "get-streams": getStreams,
  "get-stream-by-id": getStreamById,
  "get-stream-id": getStreamId,
  "update-stream": updateStream,
  "archive-stream": archiveStream,
  "get-subscribers": getSubscribers,
  "get-stream-email-address": getStreamEmailAddress,
  "get-subscriptions": getSubscriptions,
  subscribe,
  unsubscribe,
  "update-subscriptions": updateSubscriptions,
  "create-channel-folder": createChannelFolder,
  "patch-channel-folders": patchChannelFolders,
  "get-channel-folders": getChannelFolders,
  "update-channel-folder": updateChannelFolder,
  "add-default-stream": addDefaultStream,
  "remove-default-stream": removeDefaultStream,
  "update-user-topic": updateUserTopic,
  "mute-topic": muteTopic,
  "update-subscription-property": updateSubscriptionProperty,
  "update-subscription-settings": updateSubscriptionSettings,
  "get-users": getUsers,
  "get-own-user": getOwnUser,
  "get-user-by-email": getUserByEmail,
  "update-user": updateUser,
  "update-user-by-email": updateUserByEmail,
  "create-user": createUser,
  "update-status-for-user": updateStatusForUser,
  "update-status": updateStatus,
  "get-user-status": getUserStatus,
  "create-custom-profile-field": createCustomProfileField,
  "update-custom-profile-data": updateCustomProfileData,
  "get-custom-profile-fields": getCustomProfileFields,
  "reorder-custom-profile-fields": reorderCustomProfileFields,
  "update-custom-profile-field": updateCustomProfileField,
  "delete-custom-profile-field": deleteCustomProfileField,
  "remove-custom-profile-data": removeCustomProfileData,
  "update-user-group": updateUserGroup,
  "get-user-groups": getUserGroups,
  "create-user-group": createUserGroup,
  "deactivate-user-group": deactivateGroup,
  "get-user-group-members": getUserGroupMembers,
  "update-user-group-members": updateUserGroupMembers,
  "get-user-group-subgroups": getUserGroupSubgroups,
  "update-user-group-subgroups": updateUserGroupSubgroups,
  "get-is-user-group-member": getIsUserGroupMember,
  "send-invites": sendInvites,
  "get-invites": getInvites,
  "create-invite-link": createInviteLink,
  "revoke-email-invite": revokeEmailInvite,
  "resend-email-invite": resendEmailInvite,
  "revoke-invite-link": revokeInviteLink,
  "update-realm": updateRealm,
  "e2ee-test-notify": e2eeTestNotify,
  "register-push-device": registerPushDevice,
  "register-client-device": registerClientDevice,
  "remove-client-device": removeClientDevice,
  "create-video-call": createVideoCall,
  "create-webex-video-call": createWebexVideoCall,
  "dev-fetch-api-key": devFetchApiKey,
  "test-welcome-bot-custom-message": testWelcomeBotCustomMessage,
  "add-code-playground": addCodePlayground,
  "remove-code-playground": removeCodePlayground,
  "get-realm-exports": getRealmExports,
  "export-realm": exportRealm,
  "delete-realm-export": deleteRealmExport,
  "get-realm-export-consents": getRealmExportConsents,
  "create-big-blue-button-video-call": createBigBlueButtonVideoCall,
  "upload-file": uploadFile,
  "get-file-temporary-url": getFileTemporaryUrl,
  "deactivate-user": deactivateUser,
  "deactivate-own-user": deactivateOwnUser,
  "reactivate-user": reactivateUser,
  "regenerate-api-key": regenerateApiKey,
  "upload-avatar": uploadAvatar,
  "delete-avatar": deleteAvatar,
  "create-bot": createBot,
  "get-bots": getBots,
  "update-bot": updateBot,
  "deactivate-bot": deactivateBot,
  "get-bot-api-key": getBotApiKey,
  "update-presence": updatePresence,
  "get-user-presence": getUserPresence,
  "get-presence": getPresence,
  "delete-message": deleteMessage,
  "delete-topic": deleteTopic,
  "get-stream-topics": getStreamTopics,
  "render-message": renderMessage,
  "get-subscription-status": getSubscriptionStatus,
  "get-user-channels": getUserChannels,
  "get-linkifiers": getLinkifiers,
  "reorder-linkifiers": reorderLinkifiers,
  "add-linkifier": addLinkifier,
  "update-linkifier": updateLinkifier,
  "remove-linkifier": removeLinkifier,
  "add-reaction": addReaction,
  "remove-reaction": removeReaction,
  "create-submessage": createSubmessage,
  "add-apns-token": addApnsToken,
  "remove-apns-token": removeApnsToken,
  "add-fcm-token": addFcmToken,
  "remove-fcm-token": removeFcmToken,
  "test-notify": testNotify,
  "get-custom-emoji": getCustomEmoji,
  "upload-custom-emoji": uploadCustomEmoji,
  "deactivate-custom-emoji": deactivateCustomEmoji,
  "update-message-flags": updateMessageFlags,
  "update-message-flags-for-narrow": updateMessageFlagsForNarrow,
  "mark-all-as-read": markAllAsRead,
  "mark-stream-as-read": markStreamAsRead,
  "mark-topic-as-read": markTopicAsRead,
  "get-read-receipts": getReadReceipts,
  "get-alert-words": getAlertWords,
  "add-alert-words": addAlertWords,
  "remove-alert-words": removeAlertWords,
  "mute-user": muteUser,
  "unmute-user": unmuteUser,
} satisfies HandlerMap;

/**
 * One route lookup per request: the validator matches the operation (its `req.openapi`) and
 * this dispatcher runs that operation's handler, so validation and handling can never disagree
 * on which operation a URL names (they did for a `#fragment` sent on the wire).
 */
export function dispatcher(spec: LoadedSpec, deps: AppDeps) {
  for (const op of spec.operations.values())
    if (!(handlers as Record<string, unknown>)[op.operationId])
      throw new Error(`No handler for operation ${op.operationId}`);
  return async function dispatch(req: Request, res: Response, next: NextFunction) {
    const op = operationFor(spec, req);
    if (!op) return next();
    const responseHeaders: Record<string, string> = {};
    try {
      // Dispatch by the operation the validator matched: the request was checked against that
      // operation's schema, which is what its handler's Handler<K> types; no one K names it here.
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
      const handler = (handlers as Record<string, Handler<any>>)[op.operationId]!;
      const path: Record<string, unknown> = {};
      const pathParams: Record<string, string> =
        (req as { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams ?? {};
      for (const [name, value] of Object.entries(pathParams)) {
        const own = op.pathParamRenames[name] ?? name;
        path[own] = op.pathParamTypes[own] === "integer" ? Number(value) : value;
      }
      const queryKeys = Object.keys(sentQuery(res));
      const body =
        req.body && typeof req.body === "object" ? (req.body as Record<string, unknown>) : {};
      const ignored = ignoredParameters(op.knownParams, [...queryKeys, ...Object.keys(body)]);
      const ctx: PublicContext | RequestContext = {
        ...deps,
        ...req.zulip,
        host: req.zulip?.host ?? deps.config.externalHost,
        userAgent: req.headers["user-agent"],
        responseHeaders,
      };
      // The validator lets ±Infinity through as an integer; no id can be one.
      refuseInexactNumbers(path);
      refuseInexactNumbers(req.query, op.clampedParams);
      refuseInexactNumbers(body);
      const counter = requestCounter(res);
      const data = await countStatements(counter, () =>
        // eslint-disable-next-line @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-argument -- dispatch, as above
        handler({ path, query: req.query, body } as any, ctx as any),
      );
      jsonSuccess(res.set(responseHeaders), data, ignored);
      deps.observe?.({
        operationId: op.operationId,
        status: res.statusCode,
        statements: counter.statements,
      });
    } catch (err) {
      if (!res.headersSent) res.set(responseHeaders);
      next(err);
    }
  };
}
