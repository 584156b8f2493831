/** Zulip's check_password_strength (CheckPasswordStrengthTest) and its settings. */
import { describe, expect, it } from "vitest";
import { ConfigError, configFromEnv } from "../../server/config.ts";
import {
  checkPasswordStrength,
  PASSWORD_TOO_WEAK,
  passwordStrengthProblem,
} from "../../server/lib/auth/passwords.ts";

describe("checkPasswordStrength", () => {
  it("never allows an empty password, whatever the settings", async () => {
    expect(await checkPasswordStrength("", { passwordMinLength: 0, passwordMinGuesses: 0 })).toBe(
      false,
    );
  });

  it("needs PASSWORD_MIN_LENGTH characters and PASSWORD_MIN_GUESSES guesses", async () => {
    const rules = { passwordMinLength: 6, passwordMinGuesses: 1000 };
    expect(await checkPasswordStrength("", rules)).toBe(false);
    expect(await checkPasswordStrength("short", rules)).toBe(false);
    // Long enough, but too easy:
    expect(await checkPasswordStrength("longer", rules)).toBe(false);
    expect(await checkPasswordStrength("f657gdGGk9", rules)).toBe(true);
    // Characters, not UTF-16 units: five emoji are five characters.
    expect(
      await checkPasswordStrength("🦊🐙🦉🐝🦄", { passwordMinLength: 6, passwordMinGuesses: 0 }),
    ).toBe(false);
    expect(
      await checkPasswordStrength("f657gdGGk9", { passwordMinLength: 11, passwordMinGuesses: 0 }),
    ).toBe(false);
  });

  it("answers Zulip's text, or ours for a password past the registration form's 100 characters", async () => {
    const rules = { passwordMinLength: 6, passwordMinGuesses: 10_000 };
    expect(await passwordStrengthProblem("password123", rules)).toBe(PASSWORD_TOO_WEAK);
    expect(PASSWORD_TOO_WEAK).toBe("The password is too weak.");
    expect(await passwordStrengthProblem("correct horse battery staple", rules)).toBeNull();
    expect(await passwordStrengthProblem("x".repeat(101), rules)).toBe(
      "The password is too long: use at most 100 characters.",
    );
  });
});

describe("settings", () => {
  it("PASSWORD_MIN_LENGTH, PASSWORD_MIN_GUESSES and RATE_LIMITING, with Zulip's defaults", () => {
    expect(configFromEnv({})).toMatchObject({
      passwordMinLength: 6,
      passwordMinGuesses: 10_000,
      rateLimiting: true,
    });
    expect(
      configFromEnv({
        PASSWORD_MIN_LENGTH: "12",
        PASSWORD_MIN_GUESSES: "1000000",
        RATE_LIMITING: "false",
      }),
    ).toMatchObject({ passwordMinLength: 12, passwordMinGuesses: 1_000_000, rateLimiting: false });
    expect(() => configFromEnv({ PASSWORD_MIN_LENGTH: "-1" })).toThrow(ConfigError);
    expect(() => configFromEnv({ RATE_LIMITING: "sometimes" })).toThrow(
      'RATE_LIMITING must be "true" or "false", not "sometimes"',
    );
  });
});
