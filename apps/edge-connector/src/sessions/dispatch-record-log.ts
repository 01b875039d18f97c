// The dispatch records of this edge kept on disk, so they outlive the process that made them.
// Without them an edge killed while its agent ran a turn forgets that the turn's dispatch id was
// accepted; the client's `retry_unknown` of that send, after the session is resumed, would then
// start a second turn with the same prompt (docs/reliability.md, "Seen").
//
// One JSON line per outcome, appended with a plain write: the kernel holds it once the write
// returns, so a killed process loses nothing. There is no fsync (a record is written on every
// send, and an fsync would cost more than the whole dispatch hop): a power loss can drop the
// last records, which then answer `absent`, as every record did before this file existed.
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import type { Logger } from '@nestjs/common';
import { z } from 'zod';
import { EDGE_AGENT_STATUSES, type EdgeAgentStatus } from '#contracts';

/** One record as the file holds it (dispatch-records.ts keeps the same in memory). */
export interface LoggedDispatch {
  owner: string;
  session: string;
  id: string;
  state: 'accepted' | 'rejected';
  status?: EdgeAgentStatus;
  itemId?: string;
  expiresAt: number;
}

/** The file in the edge's data folder (beside the agent bindings). */
export const DISPATCH_RECORDS_FILE = 'dispatch-records.jsonl';

/** A file larger than this is not read (the records' own bounds keep it near 4 MiB at most). */
const LOG_MAX_BYTES = 32 * 1024 * 1024;

const ID = z.string().min(1).max(256);
const lineSchema = z.strictObject({
  owner: ID,
  session: z.string().max(256),
  id: ID,
  state: z.enum(['accepted', 'rejected']),
  status: z.enum(EDGE_AGENT_STATUSES).optional(),
  itemId: ID.optional(),
  expiresAt: z.number().int().nonnegative(),
});

export class DispatchRecordLog {
  private fd: number | null = null;
  /** The file ends inside a line (a write cut short by a crash): the next record starts a new one. */
  private torn = false;
  /** Lines written since the file was last rewritten (the caller compacts past a bound). */
  appended = 0;

  constructor(
    private readonly file: string,
    private readonly log: Pick<Logger, 'warn'>,
  ) {}

  /** The records earlier processes wrote, oldest first; torn or foreign lines are skipped. */
  load(): LoggedDispatch[] {
    if (!existsSync(this.file)) return [];
    const info = statSync(this.file);
    if (!info.isFile() || info.size > LOG_MAX_BYTES) {
      this.log.warn(`Dispatch records in ${this.file} not read: not a file within ${LOG_MAX_BYTES} bytes.`);
      return [];
    }
    const records: LoggedDispatch[] = [];
    let skipped = 0;
    const text = readFileSync(this.file, 'utf8');
    this.torn = text !== '' && !text.endsWith('\n');
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        records.push(lineSchema.parse(JSON.parse(line)));
      } catch {
        // A line cut short by a crash (or not ours): that one record answers `absent`.
        skipped += 1;
      }
    }
    if (skipped > 0)
      this.log.warn(`Dispatch records: ${skipped} unreadable line(s) of ${this.file} skipped.`);
    this.appended = records.length;
    return records;
  }

  append(record: LoggedDispatch): void {
    try {
      this.fd ??= openSync(this.file, 'a', 0o600);
      writeSync(this.fd, `${this.torn ? '\n' : ''}${JSON.stringify(record)}\n`);
      this.torn = false;
      this.appended += 1;
    } catch (error) {
      // The record stays in memory; only a restart would forget it.
      this.log.warn(`Dispatch record not written to ${this.file}: ${(error as Error).message}`);
    }
  }

  /** Replaces the file with exactly `records` (atomically: a crash leaves the old or the new one). */
  rewrite(records: readonly LoggedDispatch[]): void {
    const next = `${this.file}.next`;
    try {
      writeFileSync(next, records.map((record) => `${JSON.stringify(record)}\n`).join(''), { mode: 0o600 });
      this.close();
      renameSync(next, this.file);
      this.appended = records.length;
      this.torn = false;
    } catch (error) {
      this.log.warn(`Dispatch records in ${this.file} not compacted: ${(error as Error).message}`);
    }
  }

  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }
}
