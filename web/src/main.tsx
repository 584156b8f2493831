/**
 * The web app's entry. Its first act sends the registration (state/register.ts: only the typed
 * client is loaded before it), whose answer is what the first screen waits for longest; the app
 * itself (app.tsx, preloaded beside this file: web/build.mjs) is evaluated and drawn meanwhile.
 */
import { registerEarly } from "./state/register.ts";

registerEarly();
void import("./app.tsx");
