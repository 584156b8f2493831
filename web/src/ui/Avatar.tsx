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
  const [failed, setFailed] = useState(false);
  return (
    <span
      class="avatar"
      style={{ background: colourOf(userId), width: `${size}px`, height: `${size}px` }}
      aria-hidden="true"
      data-initials={initials(name)}
    >
      {url && !failed && <img src={url} alt="" loading="lazy" onError={() => setFailed(true)} />}
    </span>
  );
}
