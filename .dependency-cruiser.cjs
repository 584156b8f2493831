/**
 * The server's layers (docs/architecture.md), enforced by `npm run lint` (dependency-cruiser):
 * a module imports only from its own layer or the layers below it, never from above, and no
 * import circle exists anywhere in server/, type-only imports included (a circle of types
 * today is a circle of values tomorrow).
 *
 *   main, manage → app → routes → handlers → http → actions, workers → events → lib → context
 *   → db → config, errors, logger, metrics, version
 *
 * Type-only imports may name a type of a layer above (lib/ describing the events it hands up,
 * context.ts the parts of a request): they compile away and run nothing. no-circular still
 * counts them.
 *
 * Plus: a handler never imports another handler (shared parsing goes to http/, shared rules to
 * lib/); handlers never query the database (reads go through lib/, changes through actions/:
 * types from db/ are fine); http/ calls no action (what changes state is called by a handler).
 */
const LAYERS = [
  ["main", "^server/(main\\.ts|manage/)"],
  ["app", "^server/app\\.ts$"],
  ["routes", "^server/routes\\.ts$"],
  ["handlers", "^server/handlers/"],
  ["http", "^server/http/"],
  ["actions", "^server/(actions|workers)/"],
  ["events", "^server/events/"],
  ["lib", "^server/lib/"],
  ["context", "^server/context\\.ts$"],
  ["db", "^server/db/"],
  ["base", "^server/(config|errors|logger|metrics|version)\\.ts$"],
];

const upward = LAYERS.slice(1).map(([name, path], i) => ({
  name: `layer-${name}`,
  comment: `${name} may import only from its own layer and those below it (.dependency-cruiser.cjs).`,
  severity: "error",
  from: { path },
  to: {
    path: LAYERS.slice(0, i + 1)
      .map(([, p]) => `(${p})`)
      .join("|"),
    dependencyTypesNot: ["type-only"],
  },
}));

/* global module */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "An import circle: break it by moving what both sides need one layer down.",
      severity: "error",
      from: { path: "^server/" },
      to: { circular: true },
    },
    ...upward,
    {
      name: "no-handler-to-handler",
      comment:
        "A handler never imports another handler: shared rules go to lib/, parsing to http/.",
      severity: "error",
      from: { path: "^server/handlers/([^/]+)$" },
      to: { path: "^server/handlers/", pathNot: "^server/handlers/$1$" },
    },
    {
      name: "handlers-do-not-query",
      comment: "Handlers do not query the database: read through lib/, change through actions/.",
      severity: "error",
      from: { path: "^server/handlers/" },
      to: {
        path: "^(server/db/|server/actions/transaction\\.ts$|generated/prisma/)|node_modules/(@prisma|pg|@electric-sql)/",
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "http-does-not-change",
      comment:
        "http/ is the HTTP glue under the handlers: what changes state is called by a handler.",
      severity: "error",
      from: { path: "^server/http/" },
      to: { path: "^server/(actions|workers)/", dependencyTypesNot: ["type-only"] },
    },
  ],
  options: {
    exclude: { path: "^server/tools/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
  },
};
