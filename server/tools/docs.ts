/**
 * `npm run docs`: builds the offline Redoc page generated/docs/index.html, which the server
 * serves at /api/docs (see server/http/docs.ts; `npm start` also builds it when missing or stale).
 */
import { buildDocs, DOCS_PAGE } from "../http/docs.ts";

await buildDocs();
console.log(`API docs written to ${DOCS_PAGE}`);
