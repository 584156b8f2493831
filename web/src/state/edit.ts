/** The message being edited inline, if any (one at a time, as in Zulip's web app). */
import { signal } from "@preact/signals";

export const editing = signal<number | undefined>(undefined);
