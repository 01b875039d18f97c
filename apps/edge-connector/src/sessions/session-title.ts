// What a session shows as its title (reference §4): the user's rename wins over the agent's own
// title, which wins over the title the previous window or a resumed session left; with none of
// them the first prompt stands in.
import { Limits } from '#contracts';
import { hasControl, runeHead, runeLength } from '../common/utf8.js';

/** A title a user or agent may set: not blank, ≤120 runes, no control characters. */
export function validTitle(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const title = raw.trim();
  if (!title || hasControl(title) || runeLength(title) > Limits.TITLE_MAX_RUNES) return undefined;
  return title;
}

export class SessionTitle {
  private native: string | undefined;
  private user: string | undefined;
  private frozen: string | undefined;

  /** `firstPrompt` is the text of the first user message still shown, if any. */
  shown(firstPrompt: string | undefined): string {
    if (this.user) return this.user;
    if (this.native) return this.native;
    if (this.frozen) return this.frozen;
    if (firstPrompt === undefined) return '';
    const collapsed = firstPrompt.replace(/\s+/g, ' ').trim();
    if (runeLength(collapsed) <= Limits.DISPLAY_TITLE_FALLBACK_RUNES) return collapsed;
    return `${runeHead(collapsed, Limits.DISPLAY_TITLE_FALLBACK_RUNES)}…`;
  }

  rename(title: string): void {
    this.user = title;
  }

  /** The agent's title; true when the shown title changes (a user's rename hides it). */
  setNative(raw: string | undefined): boolean {
    const title = validTitle(raw);
    if (!title || title === this.native) return false;
    this.native = title;
    return !this.user;
  }

  /** Keeps a title across a window rollover or a resume, where the first prompt is gone. */
  freeze(title: string | undefined): void {
    this.frozen = title;
  }
}
