-- Written by hand: Prisma cannot express partial indexes.

-- At most one active custom emoji of a name per organization (Zulip's
-- unique_realm_emoji_when_false_deactivated): two uploads of one name at once cannot both win,
-- while any number of deactivated ones may keep it.
CREATE UNIQUE INDEX "realm_emoji_realm_id_name_active_key" ON "realm_emoji"("realm_id", "name") WHERE NOT "deactivated";
