-- Feature level 454: the recent conversations view is "recent" as a web_home_view value (it was
-- "recent_topics"); stored users and organization defaults move to the new value, as Zulip's
-- migration 0774 does.
UPDATE "user_profile" SET "web_home_view" = 'recent' WHERE "web_home_view" = 'recent_topics';
UPDATE "realm_user_default" SET "web_home_view" = 'recent' WHERE "web_home_view" = 'recent_topics';
