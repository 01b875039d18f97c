// Server-Sent Events as the test clients read them: an event is taken only once complete (its
// blank line arrived), as a browser's EventSource does; comment lines (`: heartbeat`) apart.

export interface SseEvent {
  type: string;
  id?: string;
  data: string;
}

export class SseParser {
  private buffer = '';

  constructor(
    private readonly onEvent: (event: SseEvent) => void,
    private readonly onComment: (text: string) => void = () => undefined,
  ) {}

  /** Takes the next piece of the stream; hands on every event it completes. */
  push(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) !== -1) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let type = 'message';
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.onComment(line.slice(1).trim());
        else if (line.startsWith('event: ')) type = line.slice(7);
        else if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) this.onEvent({ type, ...(id !== undefined ? { id } : {}), data: data.join('\n') });
    }
  }
}
