import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';

/** Something open that shutdown must close. */
export interface ClosableStream {
  close(): void;
}

/**
 * The SSE streams open on this process. An open stream is a connection the HTTP server would
 * wait for forever on shutdown, so they are all closed before it stops (clients resume elsewhere
 * from their last event id).
 */
@Injectable()
export class JournalStreams implements BeforeApplicationShutdown {
  private readonly open = new Set<ClosableStream>();

  add(stream: ClosableStream): () => void {
    this.open.add(stream);
    return () => this.open.delete(stream);
  }

  beforeApplicationShutdown(): void {
    for (const stream of [...this.open]) stream.close();
  }
}
