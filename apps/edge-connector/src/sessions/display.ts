// Display bounds (reference §4). They shape what a snapshot shows and never stop the agent.
import { Limits, type Activity, type AgentFile, type EdgeAgentResult, type Message } from '#contracts';
import { utf8Bytes, utf8Head } from '../common/utf8.js';

/** One entry of the display transcript, with its UTF-8 size cached for the window budget. */
export interface DisplayMessage {
  role: 'user' | 'assistant';
  text: string;
  bytes: number;
  /** Metadata of the files a user message attached (paths, never contents). */
  attachments?: AgentFile[];
}

export function displayMessage(
  role: DisplayMessage['role'],
  text: string,
): { message: DisplayMessage; cut: boolean } {
  const bounded = utf8Head(text, Limits.MESSAGE_MAX_BYTES);
  return { message: { role, text: bounded, bytes: utf8Bytes(bounded) }, cut: bounded.length !== text.length };
}

/** Appends a streamed delta to a message, keeping the message within MESSAGE_MAX_BYTES. */
export function appendToMessage(message: DisplayMessage, delta: string): boolean {
  const room = Limits.MESSAGE_MAX_BYTES - message.bytes;
  if (room <= 0) return delta.length > 0;
  const piece = utf8Head(delta, room);
  message.text += piece;
  message.bytes += utf8Bytes(piece);
  return piece.length !== delta.length;
}

function jsonBytes(value: unknown): number {
  return utf8Bytes(JSON.stringify(value));
}

/**
 * Shrinks a wire-ready snapshot until its JSON fits SNAPSHOT_MAX_BYTES: first the largest
 * message is halved again and again, then the oldest activity is dropped. Approvals and input
 * requests are never trimmed (they must stay actionable). Works on a copy of the arrays.
 */
export function boundSnapshot(snapshot: EdgeAgentResult): EdgeAgentResult {
  let total = jsonBytes(snapshot);
  if (total <= Limits.SNAPSHOT_MAX_BYTES) return snapshot;
  const messages: Message[] = (snapshot.messages ?? []).map((message) => ({ ...message }));
  const activities: Activity[] = [...(snapshot.activities ?? [])];
  // Escaped JSON size of each message text, so each halving costs one message, not a whole snapshot.
  const sizes = messages.map((message) => jsonBytes(message.text ?? ''));
  let truncated = snapshot.truncated ?? false;
  while (total > Limits.SNAPSHOT_MAX_BYTES) {
    let largest = -1;
    for (let i = 0; i < sizes.length; i += 1) {
      if ((sizes[i] ?? 0) > 2 && (largest < 0 || (sizes[i] ?? 0) > (sizes[largest] ?? 0))) largest = i;
    }
    if (largest >= 0) {
      const message = messages[largest] as Message;
      const text = message.text ?? '';
      message.text = utf8Head(text, Math.floor(utf8Bytes(text) / 2));
      const size = jsonBytes(message.text);
      total -= (sizes[largest] ?? 0) - size;
      sizes[largest] = size;
      truncated = true;
      continue;
    }
    const dropped = activities.shift();
    if (!dropped) break;
    total -= jsonBytes(dropped) + 1;
    truncated = true;
  }
  const bounded = { ...snapshot, messages, activities, truncated };
  // The running total is exact for JSON.stringify, but one final measurement keeps it honest.
  return jsonBytes(bounded) <= Limits.SNAPSHOT_MAX_BYTES || activities.length === 0
    ? bounded
    : boundSnapshot(bounded);
}
