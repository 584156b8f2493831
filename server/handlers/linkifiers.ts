/** GET and PATCH /realm/linkifiers, POST /realm/filters, PATCH and DELETE /realm/filters/{filter_id} (zerver/views/realm_linkifiers.py). */
import {
  doAddLinkifier,
  doRemoveLinkifier,
  doReorderLinkifiers,
  doUpdateLinkifier,
} from "../actions/realm/linkifiers.ts";
import type { Handler } from "../http/types.ts";
import { realmLinkifiers } from "../lib/realm/linkifiers.ts";

export const getLinkifiers: Handler<"get-linkifiers"> = async (_req, ctx) => ({
  linkifiers: await realmLinkifiers(ctx.db, ctx.realm.id),
});

type Body = Parameters<Handler<"add-linkifier">>[0]["body"];

const input = (body: Body) => ({
  pattern: body.pattern,
  urlTemplate: body.url_template,
  exampleInput: body.example_input,
  reverseTemplate: body.reverse_template,
  alternativeUrlTemplates: body.alternative_url_templates,
});

export const addLinkifier: Handler<"add-linkifier"> = async ({ body }, ctx) => ({
  id: await doAddLinkifier(ctx, input(body)),
});

export const updateLinkifier: Handler<"update-linkifier"> = async ({ path, body }, ctx) => {
  await doUpdateLinkifier(ctx, path.filter_id, input(body));
  return {};
};

export const removeLinkifier: Handler<"remove-linkifier"> = async ({ path }, ctx) => {
  await doRemoveLinkifier(ctx, path.filter_id);
  return {};
};

export const reorderLinkifiers: Handler<"reorder-linkifiers"> = async ({ body }, ctx) => {
  await doReorderLinkifiers(ctx, body.ordered_linkifier_ids);
  return {};
};
