// What the journal consumer does with one message besides storing it: parse and validate it
// (opening a sealed snapshot), tell a permanent refusal from a retryable one, group messages by
// session, and attach a commit's page to a head notice.
import type { JsMsg } from '@nats-io/jetstream';
import type { z } from 'zod';
import {
  journalEntrySchema,
  sealedJournalEntrySchema,
  journalSubmissionEntrySchema,
  type JournalMessage,
  type JournalNoticePayload,
} from '#contracts';
import { MalformedPayloadError, type JournalCipher } from '#messaging';
import type { CommitPage } from './journal-commit-page.js';
import { UnstorableEntryError } from './journal.service.js';

/** A message and what it parsed to. */
export interface Parsed {
  msg: JsMsg;
  entry: JournalMessage;
}

/** Messages grouped by session, each group in the order given; none empty. */
export function bySession(parsed: readonly Parsed[]): [Parsed, ...Parsed[]][] {
  const groups = new Map<string, [Parsed, ...Parsed[]]>();
  for (const item of parsed) {
    const group = groups.get(item.entry.session_id);
    if (group) group.push(item);
    else groups.set(item.entry.session_id, [item]);
  }
  return [...groups.values()];
}

/** Why a message can never be stored; anything else is worth another attempt. */
export function permanentReason(error: unknown): string | null {
  if (error instanceof MalformedPayloadError) return 'not JSON';
  if (error instanceof UnstorableEntryError) return error.message;
  return null;
}

/**
 * Parses anything a journal subject carries (`journalMessageSchema`), choosing the schema by the
 * message's kind so a refusal names the field at fault rather than "no union member matched".
 * An edge update's row is opened with the journal key and its snapshot validated like any
 * message: a row that does not open was not sealed by the router and is never stored.
 */
export function parseJournalMessage(value: unknown, cipher: JournalCipher): JournalMessage {
  const submission =
    typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'submission';
  if (submission) return valid(journalSubmissionEntrySchema.safeParse(value));
  const sealed = valid(sealedJournalEntrySchema.safeParse(value));
  let opened;
  try {
    opened = cipher.open(sealed);
  } catch (error) {
    throw new UnstorableEntryError((error as Error).message);
  }
  return valid(journalEntrySchema.safeParse(opened));
}

function valid<T>(parsed: { success: true; data: T } | { success: false; error: z.ZodError }): T {
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new UnstorableEntryError(
    `invalid entry: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}`,
  );
}

/**
 * The notice with the last page that ends exactly at its head (a session's rows may have been
 * committed in more than one transaction of the batch: only the last page reaches the head).
 */
export function withPage(head: JournalNoticePayload, pages: readonly CommitPage[]): JournalNoticePayload {
  const found = pages.findLast(
    ({ key, page }) =>
      key.sessionId === head.session_id &&
      page.epoch === head.epoch &&
      page.window.nextCursor.sequence === head.head,
  );
  if (!found) return head;
  const { key, from, page } = found;
  const committed = {
    actor_id: key.ownerId,
    access_id: key.accessId,
    edge_id: String(key.edgeId),
    from: Number(from),
    page,
  };
  return { ...head, committed };
}
