/**
 * The compiled server (`npm start`'s and `npm run manage`'s command: dist/server/, built by
 * server/tools/build.mjs), for the tests that run it as a process. test/helpers/global-setup.ts
 * builds it once before the files run (only if a source is newer than the build), so that each
 * process starts with `node` alone instead of compiling the TypeScript again under `tsx`.
 */
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
/** `node dist/server/main.js`: the server process. */
export const SERVER_COMMAND = [process.execPath, `${root}dist/server/main.js`] as const;
/** `node dist/server/manage.js`: the admin CLI (`npm run manage --`). */
export const MANAGE_COMMAND = [process.execPath, `${root}dist/server/manage.js`] as const;
