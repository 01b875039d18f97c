import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  requestSchemas,
  type HistoryArchiveWindowReply,
  type HistoryDeleteReply,
  type HistoryRenameReply,
  type HistoryResumeSeedReply,
  type HistorySnapshotReply,
  type HistoryTranscriptReply,
} from '#contracts';
import { parsePayload } from '#messaging';
import { ArchiveService } from './archive.service.js';

/** The router's requests on stored sessions; each payload is validated once, here. */
@Controller()
export class ArchiveHandler {
  constructor(private readonly archive: ArchiveService) {}

  @MessagePattern('historyResumeSeed')
  resumeSeed(@Payload() payload: unknown): Promise<HistoryResumeSeedReply> {
    return this.archive.resumeSeed(
      parsePayload('historyResumeSeed', requestSchemas.historyResumeSeed, payload),
    );
  }

  @MessagePattern('historySnapshot')
  snapshot(@Payload() payload: unknown): Promise<HistorySnapshotReply> {
    return this.archive.snapshot(parsePayload('historySnapshot', requestSchemas.historySnapshot, payload));
  }

  // Routers of this release never call it (history archives windows from the journal, see
  // journal-fold.ts); it answers the routers of the previous release during a rolling upgrade,
  // and both writes of one window hold the same final state (first write wins).
  @MessagePattern('historyArchiveWindow')
  archiveWindow(@Payload() payload: unknown): Promise<HistoryArchiveWindowReply> {
    return this.archive.archiveWindow(
      parsePayload('historyArchiveWindow', requestSchemas.historyArchiveWindow, payload),
    );
  }

  @MessagePattern('historyRename')
  rename(@Payload() payload: unknown): Promise<HistoryRenameReply> {
    return this.archive.rename(parsePayload('historyRename', requestSchemas.historyRename, payload));
  }

  @MessagePattern('historyDelete')
  delete(@Payload() payload: unknown): Promise<HistoryDeleteReply> {
    return this.archive.delete(parsePayload('historyDelete', requestSchemas.historyDelete, payload));
  }

  @MessagePattern('historyTranscript')
  transcript(@Payload() payload: unknown): Promise<HistoryTranscriptReply> {
    return this.archive.transcript(
      parsePayload('historyTranscript', requestSchemas.historyTranscript, payload),
    );
  }
}
