/**
 * A user's avatar: their initials on a colour of their own, with the image over it when it
 * loads (a Gravatar needs the internet; an organization without it still shows faces apart).
 */
import { useState } from "preact/hooks";
import { colourOf, initials } from "./format.ts";

export function Avatar({
  userId,
  name,
  url,
  size = 36,
}: {
  userId: number;
  name: string;
  url?: string;
  size?: number;
}) {
  // The URL that failed to load: a new one (an uploaded avatar) is tried again.
  const [failed, setFailed] = useState<string | null>(null);
  return (
    <span
      class="avatar"
      style={{ background: colourOf(userId), width: `${size}px`, height: `${size}px` }}
      aria-hidden="true"
      data-initials={initials(name)}
    >
      {url && url !== failed && (
        <img src={url} alt="" loading="lazy" onError={() => setFailed(url)} />
      )}
    </span>
  );
}
