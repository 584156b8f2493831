/** The group-settings registry against the Prisma models and the API document. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { Prisma } from "../../server/db/index.ts";
import {
  CHANNEL_GROUP_SETTINGS,
  GROUP_SETTINGS,
  OFFERED_REALM_SETTINGS,
  REALM_GROUP_SETTINGS,
  settingColumn,
  SystemGroups,
  USER_GROUP_SETTINGS,
} from "../../server/lib/groups/group-settings.ts";

/** Model fields that hold a group setting: every `…GroupId` (and Zulip's `can_create_groups`, `can_manage_all_groups`). */
const groupFields = (fields: Record<string, string>) =>
  Object.values(fields).filter((f) => /Groups?Id$/.test(f));

describe("the group-settings registry", () => {
  it.each([
    ["Realm", Prisma.RealmScalarFieldEnum, REALM_GROUP_SETTINGS, 24],
    ["Stream", Prisma.StreamScalarFieldEnum, CHANNEL_GROUP_SETTINGS, 11],
    ["NamedUserGroup", Prisma.NamedUserGroupScalarFieldEnum, USER_GROUP_SETTINGS, 6],
  ] as const)(
    "has exactly one entry for every group-setting field of %s",
    (_model, fields, registry, count) => {
      const entries = Object.values(registry as Record<string, { field: string }>);
      expect(entries.map((s) => s.field).sort()).toEqual(groupFields(fields).sort());
      expect(new Set(entries.map((s) => s.field)).size).toBe(entries.length);
      expect(entries).toHaveLength(count);
    },
  );

  it("names each entry by its API name, whose camel case plus Id is the field, and its column follows", () => {
    for (const setting of GROUP_SETTINGS) {
      expect(setting.field).toBe(
        `${setting.name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())}Id`,
      );
      expect(settingColumn(setting)).toBe(`${setting.name}_id`);
    }
  });

  it("gives every setting a default its own rules accept", () => {
    const systemNames = Object.values(SystemGroups) as string[];
    for (const setting of GROUP_SETTINGS) {
      for (const def of [setting.default, setting.defaultForSystemGroups].filter(
        (d) => d !== undefined,
      )) {
        if (!systemNames.includes(def)) {
          // Creator defaults are anonymous groups, for the kinds that have a creator.
          expect(setting.allowAnonymousGroup).toBe(true);
          expect(def).toBe(setting.kind === "channel" ? "channel_creator" : "group_creator");
          continue;
        }
        expect(def === SystemGroups.EVERYONE && !setting.allowEveryoneGroup, setting.name).toBe(
          false,
        );
        expect(def === SystemGroups.NOBODY && !setting.allowNobodyGroup, setting.name).toBe(false);
        expect(def === SystemGroups.INTERNET && !setting.allowInternetGroup, setting.name).toBe(
          false,
        );
        if (setting.allowedSystemGroups.length) expect(setting.allowedSystemGroups).toContain(def);
      }
      expect(setting.allowAnonymousGroup).toBe(!setting.requireSystemGroup);
    }
    expect(USER_GROUP_SETTINGS.can_manage_group.allowEveryoneGroup).toBe(false);
    expect(USER_GROUP_SETTINGS.can_mention_group.allowEveryoneGroup).toBe(true);
  });

  it("offers through the API exactly the organization settings PATCH /realm declares", () => {
    const spec = parse(
      readFileSync(new URL("../../openapi/paths/realm.yaml", import.meta.url), "utf8"),
    );
    const properties: Record<string, { $ref?: string }> =
      spec.realm.patch.requestBody.content["application/x-www-form-urlencoded"].schema.properties;
    const declared = Object.entries(properties)
      .filter(([, p]) => p.$ref?.endsWith("GroupSettingUpdateValue.yaml"))
      .map(([name]) => name);
    expect(OFFERED_REALM_SETTINGS.map((s) => s.name).sort()).toEqual(declared.sort());
  });
});
