/** RATE_LIMITING_RULES (Zulip's format, in JSON, merged over the defaults) and TRUSTED_PROXIES. */
import { describe, expect, it } from "vitest";
import { ConfigError, configFromEnv } from "../../server/config.ts";

describe("RATE_LIMITING_RULES", () => {
  it("defaults to Zulip's rules", () => {
    expect(configFromEnv({}).rateLimitingRules).toEqual({
      api_by_user: [[60, 200]],
      api_by_ip: [[60, 100]],
      authenticate_by_username: [[1800, 5]],
    });
  });

  it("replaces the domains it names, keeping the others, each domain's rules shortest window first", () => {
    const rules = configFromEnv({
      RATE_LIMITING_RULES: '{"api_by_user": [[3600, 2000], [1, 5]], "api_by_ip": []}',
    }).rateLimitingRules;
    expect(rules).toEqual({
      api_by_user: [
        [1, 5],
        [3600, 2000],
      ],
      api_by_ip: [],
      authenticate_by_username: [[1800, 5]],
    });
  });

  it("refuses what is not JSON, an unknown domain, and a pair that is not two positive whole numbers", () => {
    for (const bad of [
      "api_by_user=1",
      "[]",
      '{"api_by_usr": [[60, 200]]}',
      '{"api_by_user": [[60]]}',
      '{"api_by_user": [[60, 0]]}',
      '{"api_by_user": [[1.5, 10]]}',
      '{"api_by_user": {"60": 200}}',
    ])
      expect(() => configFromEnv({ RATE_LIMITING_RULES: bad }), bad).toThrow(
        /^RATE_LIMITING_RULES must be a JSON object mapping api_by_user, api_by_ip, authenticate_by_username to lists of \[seconds, requests\] pairs/,
      );
  });
});

describe("TRUSTED_PROXIES", () => {
  it("takes Express's trust proxy syntax, loopback by default", () => {
    expect(configFromEnv({}).trustedProxies).toBe("loopback");
    expect(configFromEnv({ TRUSTED_PROXIES: "10.0.0.0/8, 192.0.2.1" }).trustedProxies).toBe(
      "10.0.0.0/8, 192.0.2.1",
    );
    expect(configFromEnv({ TRUSTED_PROXIES: "2" }).trustedProxies).toBe(2);
    expect(configFromEnv({ TRUSTED_PROXIES: "false" }).trustedProxies).toBe(false);
  });

  it("refuses what is not an address, a subnet or a known name", () => {
    expect(() => configFromEnv({ TRUSTED_PROXIES: "nginx.local" })).toThrow(ConfigError);
    expect(() => configFromEnv({ TRUSTED_PROXIES: "10.0.0.0/99" })).toThrow(
      /^TRUSTED_PROXIES must be addresses or subnets/,
    );
  });
});
