/** What this server tells clients about itself (GET /server_settings, POST /register). */
export const ZULIP_FEATURE_LEVEL = 496;
export const ZULIP_VERSION = "12.0-dev";
export const ZULIP_MERGE_BASE = "12.0-dev";
