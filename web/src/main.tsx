/**
 * The web app's entry. Its first act sends the registration and the view's first messages
 * (state/register.ts: only the typed client and narrow.ts are loaded before), whose answers are
 * what the first screen waits for; the app itself (app.tsx and its chunks, web/build.mjs) is
 * fetched, evaluated and drawn meanwhile.
 */
import { fetchViewEarly, registerEarly } from "./state/register.ts";

registerEarly();
fetchViewEarly();
void import("./app.tsx");
