import { doUploadMessageAttachment } from "../actions/uploads/uploads.ts";
import { JsonableError, ResourceNotFoundError } from "../errors.ts";
import { accessAttachment } from "../lib/uploads/attachments.ts";
import { uploadStorage } from "../lib/uploads/upload-storage.ts";
import { temporaryUrl } from "../lib/uploads/uploads.ts";
import { receivedUpload } from "../http/uploads.ts";
import type { Handler } from "../http/types.ts";

/** Zulip's PLAN_TYPE_SELF_HOSTED: the size limit is the server's, not a plan's. */
const PLAN_TYPE_SELF_HOSTED = 1;

export const uploadFile: Handler<"upload-file"> = async ({ body }, ctx) => {
  const upload = receivedUpload(body);
  if (upload.files.length === 0 && !upload.tooMany && !upload.tooLarge)
    throw new JsonableError("You must specify a file to upload");
  if (upload.tooMany) throw new JsonableError("You may only upload one file at a time");
  if (upload.tooLarge) {
    const max = ctx.config.maxFileUploadSizeMib;
    throw new JsonableError(
      ctx.realm.planType === PLAN_TYPE_SELF_HOSTED
        ? `File is larger than this server's configured maximum upload size (${max} MiB).`
        : `File is larger than the maximum upload size (${max} MiB) allowed by your organization's plan.`,
    );
  }
  const { url, filename } = await doUploadMessageAttachment(ctx, upload.files[0]!);
  // `uri` is Zulip's older name for `url`.
  return { uri: url, url, filename };
};

export const getFileTemporaryUrl: Handler<"get-file-temporary-url"> = async ({ path }, ctx) => {
  const pathId = `${path.realm_id_str}/${path.filename}`;
  await accessAttachment(ctx.db, ctx.user, pathId);
  if (!(await (await uploadStorage(ctx.config)).exists(pathId)))
    throw new ResourceNotFoundError("File not found");
  return { url: await temporaryUrl(ctx.db, pathId, ctx.now()) };
};
