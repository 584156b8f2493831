-- Feature level 453: the GIF rating applies to every GIF provider (Zulip's migration 0773).
ALTER TABLE "realm" RENAME COLUMN "giphy_rating" TO "gif_rating_policy";

-- Feature level 469: the organization's size of image and video previews, in percent.
ALTER TABLE "realm" ADD COLUMN     "media_preview_size" INTEGER NOT NULL DEFAULT 100;
