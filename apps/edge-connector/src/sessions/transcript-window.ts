// The display window of a session (reference §2.3 send step 5, §4): its messages, within the
// message count and byte budgets, and the activities that point into them. `truncated` says the
// window no longer shows everything that happened in it.
import { Limits, sentMessageItemId, type AgentFile, type Message } from '#contracts';
import { ActivityLog } from './activity-log.js';
import { appendToMessage, displayMessage, type DisplayMessage } from './display.js';

export interface RestoredMessage {
  role: 'user' | 'assistant';
  text: string;
  attachments?: AgentFile[];
}

export class TranscriptWindow {
  window = 0;
  truncated = false;
  readonly activities: ActivityLog;
  private messages: DisplayMessage[] = [];
  private messageBytes = 0;
  /** The native item the last assistant message streams; a new item starts a new message. */
  private replyItemId: string | undefined;

  constructor(saved: boolean) {
    this.activities = new ActivityLog(saved, {
      messageIndex: () => Math.max(0, this.messages.length - 1),
      evicted: () => {
        this.truncated = true;
      },
    });
  }

  get isEmpty(): boolean {
    return this.messages.length === 0 && this.activities.isEmpty;
  }

  get messageCount(): number {
    return this.messages.length;
  }

  /** The first prompt still in the window (the fallback title). */
  firstPrompt(): string | undefined {
    return this.messages.find((message) => message.role === 'user')?.text;
  }

  /** The item id of the last prompt, as a snapshot of this window names it (`sentMessageItemId`). */
  lastPromptItemId(): string | undefined {
    return sentMessageItemId({ window: this.window, messages: this.messages });
  }

  /** Takes the window of a resume seed (already checked against the display bounds). */
  restore(window: number, truncated: boolean, messages: readonly RestoredMessage[]): void {
    this.window = window;
    this.truncated = truncated;
    for (const message of messages) this.push(message.role, message.text, message.attachments);
  }

  /** Window rollover once the current one's final state is journaled (history archives it from there). */
  rollOver(): void {
    this.window += 1;
    this.messages = [];
    this.messageBytes = 0;
    this.activities.clear();
    this.truncated = false;
  }

  /** The prompt (with what it attached: metadata only) and the empty reply a turn streams into. */
  beginTurn(text: string, attachments?: AgentFile[]): void {
    this.push('user', text, attachments);
    this.push('assistant', '');
    this.replyItemId = undefined;
  }

  /** Streams reply text; a new native item after another one starts its own message. */
  appendReply(itemId: string, text: string): void {
    const last = this.messages[this.messages.length - 1];
    if (this.replyItemId === undefined && last?.role === 'assistant' && last.text === '') {
      this.replyItemId = itemId;
    } else if (itemId !== this.replyItemId || last?.role !== 'assistant') {
      this.replyItemId = itemId;
      this.push('assistant', '');
    }
    const message = this.messages[this.messages.length - 1] as DisplayMessage;
    const before = message.bytes;
    if (appendToMessage(message, text)) this.truncated = true;
    this.messageBytes += message.bytes - before;
    this.enforceMessageBounds();
  }

  views(): Message[] {
    return this.messages.map((message) => ({
      role: message.role,
      text: message.text,
      ...(message.attachments ? { attachments: message.attachments } : {}),
    }));
  }

  private push(role: DisplayMessage['role'], text: string, attachments?: AgentFile[]): void {
    const { message, cut } = displayMessage(role, text);
    if (cut) this.truncated = true;
    if (attachments && attachments.length > 0) message.attachments = attachments;
    this.messages.push(message);
    this.messageBytes += message.bytes;
    this.enforceMessageBounds();
  }

  /** Drops the oldest messages past MESSAGES_MAX or MESSAGES_TEXT_MAX_BYTES. */
  private enforceMessageBounds(): void {
    let dropped = 0;
    while (
      this.messages.length > 1 &&
      (this.messages.length > Limits.MESSAGES_MAX || this.messageBytes > Limits.MESSAGES_TEXT_MAX_BYTES)
    ) {
      const oldest = this.messages.shift() as DisplayMessage;
      this.messageBytes -= oldest.bytes;
      dropped += 1;
    }
    if (dropped === 0) return;
    this.truncated = true;
    this.activities.messagesDropped(dropped);
  }
}
