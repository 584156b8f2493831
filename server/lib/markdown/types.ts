/**
 * The renderer's data shapes: the public API types (re-exported by index.ts)
 * and the markdown-it `env` through which rules reach the caller's context
 * and the result being collected.
 */
import type { Env } from "markdown-it";
import type { CompiledLinkifier } from "./linkifiers.ts";

export interface MentionCandidates {
  /** Names as written in `@**Name**` / `@**Name|id**` (not lower-cased; wildcards excluded). */
  userNames: string[];
  /** Ids from `@**Name|id**` / `@**|id**`. */
  userIds: number[];
  /** Group names as written in `@*group*`. */
  groupNames: string[];
  /** Channel names as written in `#**channel**` / `#**channel>topic**`. */
  channelNames: string[];
}

export interface MentionUser {
  id: number;
  fullName: string;
}

/** An uploaded image's preview (lib/uploads/thumbnails.ts UploadPreview; Zulip's MarkdownImageMetadata). */
export interface ImagePreview {
  /** The default thumbnail's URL; null while there is none. */
  url: string | null;
  animated: boolean;
  width: number;
  height: number;
  contentType: string | null;
}

export interface MarkdownContext {
  /** lower-cased full name → users with that name (more than one = ambiguous). */
  usersByName: Map<string, MentionUser[]>;
  usersById: Map<number, MentionUser>;
  /** lower-cased group name → group. */
  groupsByName: Map<string, { id: number; name: string }>;
  /** lower-cased channel name → channel (Zulip requires the exact-case name to link). */
  channelsByName: Map<string, { id: number; name: string }>;
  /**
   * Optional: the realm's base URL (e.g. "https://chat.example.com"). Links to
   * `<realm>/#…` and `<realm>/user_uploads/…` are made relative, as Zulip does.
   */
  realmUrl?: string;
  /**
   * Optional: inline previews of linked media (Zulip's image_preview_enabled: the organization's
   * inline_image_preview for messages; off for descriptions, which render with no previews).
   */
  mediaPreviews?: boolean;
  /** Optional: the organization's linkifiers, in order (markdown/linkifiers.ts). */
  linkifiers?: readonly CompiledLinkifier[];
  /**
   * Optional: the uploaded images the content links, by path id (uploadPathIds finds those to
   * look up): a link to one gets Zulip's thumbnail preview, `![…](…)` its thumbnail. An upload
   * missing here is no image with thumbnails: no preview.
   */
  imagePreviews?: Map<string, ImagePreview>;
  /** Optional: custom (realm) emoji by name, rendered as `<img class="emoji">`. */
  realmEmoji?: Map<string, { sourceUrl: string }>;
}

export interface RenderResult {
  html: string;
  /** Non-silent user mentions (outside quotes). */
  mentionedUserIds: Set<number>;
  /** Non-silent user group mentions (outside quotes). */
  mentionedGroupIds: Set<number>;
  /** "channel" for @**all** (or everyone, channel, stream); "topic" for @**topic**. */
  wildcardMention: "channel" | "topic" | null;
  /** Content starts with "/me " (Zulip's `is_me_message`). */
  isMeMessage: boolean;
  /** Any `<a>` in the output (links, bare URLs, channel/topic links). */
  hasLink: boolean;
  /** A link (outside quotes) to an image file (.png, .jpg, …). */
  hasImage: boolean;
  /** A link to `/user_uploads/…`. */
  hasAttachment: boolean;
  /** Path ids (the part after `/user_uploads/`) of the linked uploads, in order. */
  potentialAttachmentPathIds: string[];
}

/** markdown-it passes `env` to every rule; this is how ours find the context and the result. */
export interface ZulipEnv extends Env {
  zulipCtx: Partial<MarkdownContext>;
  zulipResult: RenderResult;
}

export function getCtx(env: unknown): Partial<MarkdownContext> {
  return (env as ZulipEnv | undefined)?.zulipCtx ?? {};
}
