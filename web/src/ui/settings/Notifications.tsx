/**
 * Settings › Notifications (Zulip's settings_notifications): which messages notify, how, and the
 * emails; each control saves on change (PATCH /settings) and says "Saved".
 */
import { t } from "../../i18n.ts";
import { realmSettings } from "../../state/settings.ts";
import { check, Settings } from "./common.tsx";

export function NotificationsSection() {
  const sounds = [
    ...((realmSettings.value.available_notification_sounds as string[] | undefined) ?? ["ding"]),
    "none",
  ];
  return (
    <div>
      <Settings
        sections={[
          {
            title: t("Channels"),
            rows: [
              check(
                "enable_stream_desktop_notifications",
                t("Visual desktop notifications for channel messages"),
              ),
              check(
                "enable_stream_audible_notifications",
                t("Audible desktop notifications for channel messages"),
              ),
              check(
                "enable_stream_push_notifications",
                t("Mobile notifications for channel messages"),
              ),
              check(
                "enable_stream_email_notifications",
                t("Email notifications for channel messages"),
              ),
            ],
          },
          {
            title: t("Followed topics"),
            rows: [
              check(
                "enable_followed_topic_desktop_notifications",
                t("Visual desktop notifications for followed topics"),
              ),
              check(
                "enable_followed_topic_audible_notifications",
                t("Audible desktop notifications for followed topics"),
              ),
              check(
                "enable_followed_topic_push_notifications",
                t("Mobile notifications for followed topics"),
              ),
              check(
                "enable_followed_topic_email_notifications",
                t("Email notifications for followed topics"),
              ),
              check(
                "enable_followed_topic_wildcard_mentions_notify",
                t("Notify for @all mentions in followed topics"),
              ),
            ],
          },
          {
            title: t("Desktop message notifications"),
            rows: [
              check(
                "enable_desktop_notifications",
                t("Visual desktop notifications for direct messages and @-mentions"),
              ),
              check(
                "enable_sounds",
                t("Audible desktop notifications for direct messages and @-mentions"),
              ),
              check(
                "pm_content_in_desktop_notifications",
                t("Include content of direct messages in desktop notifications"),
              ),
              check(
                "wildcard_mentions_notify",
                t("Notify for @all, @everyone and @channel mentions"),
              ),
              {
                name: "notification_sound",
                label: t("Notification sound"),
                options: sounds.map((s) => ({ value: s, label: s === "none" ? t("None") : s })),
              },
              {
                name: "desktop_icon_count_display",
                label: t("Unread count badge (appears in desktop sidebar and browser tab)"),
                numeric: true,
                options: [
                  { value: "1", label: t("All unread messages") },
                  { value: "2", label: t("DMs, mentions, and followed topics") },
                  { value: "3", label: t("DMs and mentions") },
                  { value: "4", label: t("None") },
                ],
              },
            ],
          },
          {
            title: t("Mobile and email notifications"),
            rows: [
              check(
                "enable_offline_push_notifications",
                t("Mobile notifications for direct messages and @-mentions when offline"),
              ),
              check(
                "enable_offline_email_notifications",
                t("Email notifications for direct messages and @-mentions when offline"),
              ),
              {
                name: "email_notifications_batching_period_seconds",
                label: t("Delay before sending message notification emails"),
                numeric: true,
                options: [
                  { value: "120", label: t("2 minutes") },
                  { value: "300", label: t("5 minutes") },
                  { value: "600", label: t("10 minutes") },
                  { value: "1800", label: t("30 minutes") },
                  { value: "3600", label: t("1 hour") },
                  { value: "21600", label: t("6 hours") },
                  { value: "86400", label: t("1 day") },
                  { value: "259200", label: t("3 days") },
                  { value: "604800", label: t("1 week") },
                ],
              },
              {
                name: "realm_name_in_email_notifications_policy",
                label: t("Include organization name in subject of message notification emails"),
                numeric: true,
                options: [
                  { value: "1", label: t("Automatic") },
                  { value: "2", label: t("Always") },
                  { value: "3", label: t("Never") },
                ],
              },
            ],
          },
          {
            title: t("Other emails"),
            rows: [
              check("enable_digest_emails", t("Send digest emails when I'm away")),
              check(
                "enable_login_emails",
                t("Send email notifications for new logins to my account"),
              ),
              check(
                "enable_marketing_emails",
                t("Send me Zulip's low-traffic newsletter (a few emails a year)"),
              ),
            ],
          },
        ]}
      />
    </div>
  );
}
