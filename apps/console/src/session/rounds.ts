// From journal items to what the conversation shows: rounds (one display window each, reference
// §4 "Windows / rounds"), each with its messages and, after the message they belong to, the
// agent's activities.
import type { Activity } from '../../../../libs/contracts/src/edge-agent.js';
import type { JournalItem } from '../../../../libs/contracts/src/internal.js';

export interface MessageBody {
  type: 'message';
  role: string;
  text?: string;
  attachments?: { name?: string; path?: string; size?: number }[];
}

/** A journal activity row: the edge's activity under the journal's own id field. */
export type ActivityBody = Omit<Activity, 'id'> & { type: 'activity'; activity_id: string };

export interface Entry {
  item: JournalItem;
  window: number;
  /** Order inside the round: message index, activities just after their message. */
  position: number;
  body: MessageBody | ActivityBody | null;
}

export interface Round {
  window: number;
  entries: Entry[];
}

/** The reference UI: the live round and 19 archived ones, then 20 more per request. */
export const INITIAL_ARCHIVED_ROUNDS = 19;
export const MORE_ROUNDS = 20;

function entryOf(item: JournalItem): Entry | null {
  const match = /^([ma]):(\d+):(.+)$/.exec(item.itemId);
  if (!match) return null;
  const window = Number(match[2]);
  const body = (item.body ?? null) as MessageBody | ActivityBody | null;
  if (match[1] === 'm') return { item, window, position: Number(match[3]) * 2, body };
  const index = body && body.type === 'activity' ? (body.message_index ?? 0) : 0;
  return { item, window, position: index * 2 + 1, body };
}

export function toRounds(items: Iterable<JournalItem>): Round[] {
  const byWindow = new Map<number, Entry[]>();
  for (const item of items) {
    const entry = entryOf(item);
    if (!entry) continue;
    const list = byWindow.get(entry.window) ?? [];
    list.push(entry);
    byWindow.set(entry.window, list);
  }
  return [...byWindow.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([window, entries]) => ({
      window,
      entries: entries.sort(
        (a, b) =>
          a.position - b.position ||
          a.item.sequence - b.item.sequence ||
          a.item.itemId.localeCompare(b.item.itemId),
      ),
    }));
}

/** The whole loaded conversation as Markdown: the transcript a person can keep. */
export function transcript(rounds: Round[], title: string): string {
  const lines = [`# ${title}`, ''];
  for (const round of rounds) {
    lines.push(`## Round ${round.window + 1}`, '');
    for (const { body } of round.entries) {
      if (!body) continue;
      if (body.type === 'message') lines.push(`**${body.role}:** ${body.text ?? ''}`, '');
      else if (body.command) lines.push(`> ${body.kind} \`${body.command}\` (${body.status ?? ''})`, '');
      else lines.push(`> ${body.kind} (${body.status ?? ''})`, '');
    }
  }
  return lines.join('\n');
}
