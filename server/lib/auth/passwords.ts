/**
 * Password hashing with scrypt from node:crypto: memory-hard (N=2^15, r=8 → 32 MiB per hash)
 * and built into Node, so no native addon has to be compiled. Stored as
 * `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>` so the parameters can be raised later and old
 * hashes still verify.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from "node:crypto";

const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

function scrypt(
  password: string,
  salt: Buffer,
  keylen: number,
  options: ScryptOptions,
): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

const maxmem = (n: number, r: number) => 128 * n * r * 2;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEY_LENGTH, { N, r: R, p: P, maxmem: maxmem(N, R) });
  return ["scrypt", N, R, P, salt.toString("base64"), hash.toString("base64")].join("$");
}

/** A hash of a random password, compared against when the user does not exist (same cost). */
let dummyHash: Promise<string> | undefined;

export async function verifyPassword(
  password: string,
  stored: string | null | undefined,
): Promise<boolean> {
  const encoded = stored ?? (await (dummyHash ??= hashPassword(randomBytes(16).toString("hex"))));
  const [scheme, n, r, p, salt, hash] = encoded.split("$");
  if (scheme !== "scrypt" || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64");
  const actual = await scrypt(password, Buffer.from(salt, "base64"), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: maxmem(Number(n), Number(r)),
  });
  return stored !== null && stored !== undefined && timingSafeEqual(actual, expected);
}

/** Zulip's API keys: 32 characters from [A-Za-z0-9] (zerver/lib/utils.py generate_api_key). */
export function generateApiKey(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = randomBytes(64);
  let key = "";
  // Rejection sampling keeps every character equally likely (256 is not a multiple of 62).
  for (const b of bytes) if (b < 248 && key.length < 32) key += alphabet[b % 62];
  return key.length === 32 ? key : generateApiKey();
}

/** Zulip's PASSWORD_MIN_LENGTH (zproject/default_settings.py) and the registration form's MAX_PASSWORD_LENGTH. */
export const PASSWORD_MIN_LENGTH = 6;
export const PASSWORD_MAX_LENGTH = 100;

/**
 * The admin CLI's rule: check_password_strength's default length, with a text that says what to
 * do (Zulip's management commands check no strength at all). New accounts made through the API
 * or the sign-up page get passwordStrengthProblem instead.
 */
export function passwordProblem(password: string): string | null {
  if ([...password].length < PASSWORD_MIN_LENGTH)
    return `The password is too weak: use at least ${PASSWORD_MIN_LENGTH} characters.`;
  if ([...password].length > PASSWORD_MAX_LENGTH)
    return `The password is too long: use at most ${PASSWORD_MAX_LENGTH} characters.`;
  return null;
}

/**
 * What a new password needs, in words, for where a person types one (the sign-up page): the
 * API's refusal stays Zulip's bare "The password is too weak.", the form says this beside it.
 */
export function passwordRuleText(rules: PasswordRules): string {
  const length = `at least ${rules.passwordMinLength} characters`;
  return rules.passwordMinGuesses > 0
    ? `Use ${length}, and nothing easy to guess: common words and passwords, names, dates, repeats and keyboard patterns are refused. A few unrelated words make a strong password.`
    : `Use ${length}.`;
}

/** Zulip's PASSWORD_TOO_WEAK_ERROR (zerver/forms.py). */
export const PASSWORD_TOO_WEAK = "The password is too weak.";

export interface PasswordRules {
  passwordMinLength: number;
  passwordMinGuesses: number;
}

let estimator: Promise<(password: string) => number> | undefined;

/**
 * zxcvbn-ts with its common and English dictionaries: several MiB, so loaded on the first
 * password checked rather than at start-up, and once. Returns zxcvbn's estimate of the guesses a
 * cracker needs.
 */
function guessesEstimator(): Promise<(password: string) => number> {
  return (estimator ??= (async () => {
    const [{ ZxcvbnFactory }, common, en] = await Promise.all([
      import("@zxcvbn-ts/core"),
      import("@zxcvbn-ts/language-common"),
      import("@zxcvbn-ts/language-en"),
    ]);
    const zxcvbn = new ZxcvbnFactory({
      dictionary: { ...common.dictionary, ...en.dictionary },
      graphs: common.adjacencyGraphs,
      translations: en.translations,
      // The estimate runs on the event loop, and its l33t matcher's time grows fast with length
      // (a random 100-character password took 2.6 s with the defaults, 256 characters and 100
      // substitutions; its first 72 characters with at most 10 substitutions, 0.4 s): past
      // these a password is strong by what is checked anyway.
      maxLength: 72,
      l33tMaxSubstitutions: 10,
    });
    return (password: string) => zxcvbn.check(password).guesses;
  })());
}

/**
 * Zulip's check_password_strength (zproject/backends.py): at least PASSWORD_MIN_LENGTH
 * characters, never empty, and at least PASSWORD_MIN_GUESSES guesses by zxcvbn's estimate.
 */
export async function checkPasswordStrength(
  password: string,
  rules: PasswordRules,
): Promise<boolean> {
  if ([...password].length < rules.passwordMinLength || password === "") return false;
  if (rules.passwordMinGuesses <= 0) return true;
  return (await guessesEstimator())(password) >= rules.passwordMinGuesses;
}

/**
 * The refusal of a new password, in Zulip's words, or null when it is acceptable: POST /users
 * and the sign-up page. The length cap is ours (the registration form's, checked first so that
 * zxcvbn never estimates a huge input).
 */
export async function passwordStrengthProblem(
  password: string,
  rules: PasswordRules,
): Promise<string | null> {
  if ([...password].length > PASSWORD_MAX_LENGTH)
    return `The password is too long: use at most ${PASSWORD_MAX_LENGTH} characters.`;
  return (await checkPasswordStrength(password, rules)) ? null : PASSWORD_TOO_WEAK;
}
