// ESLint: typescript-eslint's recommended type-checked rules over the server, the tests, the
// client and the tools. The layering of server/ (handlers parse and answer, actions change, lib
// reads and checks) is dependency-cruiser's (.dependency-cruiser.cjs), run by `npm run lint` too. Formatting is Prettier's alone
// (eslint-config-prettier turns off every rule that would disagree with it).
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";

/** Roles and recipient types by name (lib/users/users.ts Role, lib/recipients.ts RecipientType), never as bare numbers. */
const namedConstants = [
  {
    selector:
      "BinaryExpression[left.property.name='role'][right.raw=/^[0-9]+$/], Property[key.name='role'][value.raw=/^[0-9]+$/]",
    message:
      "Name the role: Role.OWNER, Role.ADMINISTRATOR, Role.MODERATOR, Role.MEMBER or Role.GUEST (lib/users/users.ts).",
  },
  {
    selector:
      "BinaryExpression[left.property.name='type'][right.raw=/^[123]$/], Property[key.name='type'][value.raw=/^[123]$/]",
    message:
      "Name the recipient type: RecipientType.PERSONAL, STREAM or DIRECT_MESSAGE_GROUP (lib/recipients.ts).",
  },
];

export default tseslint.config(
  { ignores: ["generated/", "**/dist/", "node_modules/", "data/", ".tmp/"] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: [
            "eslint.config.js",
            ".dependency-cruiser.cjs",
            "client/build.mjs",
            "server/tools/build.mjs",
            "web/build.mjs",
            "web/i18n-extract.mjs",
          ],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A leading underscore says "unused on purpose": Express's four-argument error handlers, keys
      // left out of a rest object.
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
          ignoreRestSiblings: true,
        },
      ],
      // `declare global { namespace Express … }` is how Express's Request is augmented.
      "@typescript-eslint/no-namespace": ["error", { allowDeclarations: true }],
      // Zulip's checks of text (emails, names, topics, URLs) match control characters on purpose.
      "no-control-regex": "off",
      // An async function that awaits nothing still promises, as the interface it implements asks
      // (listen, fetch, a handler); wrapping its value in Promise.resolve would say less.
      "@typescript-eslint/require-await": "off",
      // URLSearchParams prints as a query string; Node's types declare it outside TypeScript's lib.
      "@typescript-eslint/restrict-template-expressions": [
        "error",
        {
          allow: [
            { from: "lib", name: ["Error", "URL", "URLSearchParams"] },
            { from: "package", package: "url", name: "URLSearchParams" },
          ],
        },
      ],
    },
  },
  {
    // Tests and spec tools read untyped JSON on purpose: raw HTTP answers (what a client that is not
    // ours would see; the typed client covers the typed path) and the OpenAPI document itself (the
    // error handler reads it for the texts of union-typed parameters).
    files: [
      "test/**/*.ts",
      "server/tools/**/*.ts",
      "server/http/spec.ts",
      "server/http/error-handler.ts",
    ],
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
    },
  },
  {
    // Code that runs in the page (page.evaluate) is typed with the DOM's lib: its own project.
    files: [
      "test/browser/**/*.ts",
      "test/helpers/browser.ts",
      "test/helpers/browser-suite.ts",
      "test/bench/web.ts",
    ],
    languageOptions: {
      parserOptions: {
        projectService: false,
        project: "test/browser/tsconfig.json",
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
  { files: ["server/**/*.ts"], rules: { "no-restricted-syntax": ["error", ...namedConstants] } },
  {
    // Handlers parse and answer: no query of their own (reads go through lib/, changes through
    // actions/). What they may import is .dependency-cruiser.cjs's; this catches `ctx.db.x…`.
    files: ["server/handlers/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        ...namedConstants,
        {
          // ctx.db.userProfile.findMany(…), ctx.db.$queryRaw`…`, db.stream…: passing ctx.db on to lib/ is fine.
          selector: "MemberExpression[object.type='MemberExpression'][object.property.name='db']",
          message:
            "Handlers do not query the database: read through lib/, change through actions/.",
        },
        {
          selector: "MemberExpression[object.type='Identifier'][object.name='db']",
          message:
            "Handlers do not query the database: read through lib/, change through actions/.",
        },
      ],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      globals: {
        console: "readonly",
        process: "readonly",
        URL: "readonly",
        performance: "readonly",
      },
    },
  },
  prettier,
);
