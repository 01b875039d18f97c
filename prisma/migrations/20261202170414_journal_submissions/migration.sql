-- AlterTable
ALTER TABLE "journal" DROP CONSTRAINT "journal_pkey",
ADD COLUMN     "client_message_id" TEXT,
ADD COLUMN     "id" BIGSERIAL NOT NULL,
ADD COLUMN     "legacy_revision" BIGINT,
ALTER COLUMN "payload" DROP NOT NULL,
ADD CONSTRAINT "journal_pkey" PRIMARY KEY ("id");

-- AlterTable
ALTER TABLE "journal_states" ADD COLUMN     "fence" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "journal_submissions" (
    "session_id" TEXT NOT NULL,
    "client_message_id" TEXT NOT NULL,
    "owner_id" TEXT NOT NULL,
    "access_id" CHAR(32) NOT NULL,
    "edge_id" BIGINT NOT NULL,
    "epoch" TEXT NOT NULL,
    "sequence" BIGINT NOT NULL,
    "fence" INTEGER NOT NULL,
    "payload_fingerprint" CHAR(64) NOT NULL,
    "dispatch_state" TEXT NOT NULL,
    "reason" TEXT,
    "item_id" TEXT,
    "submitted_at" TIMESTAMPTZ(3) NOT NULL,
    "resolved_at" TIMESTAMPTZ(3),

    CONSTRAINT "journal_submissions_pkey" PRIMARY KEY ("session_id","client_message_id")
);

-- CreateTable
CREATE TABLE "journal_receipts" (
    "session_id" TEXT NOT NULL,
    "client_message_id" TEXT NOT NULL,
    "owner_id" TEXT NOT NULL,
    "access_id" CHAR(32) NOT NULL,
    "edge_id" BIGINT NOT NULL,
    "item_id" TEXT,
    "epoch" TEXT NOT NULL,
    "sequence" BIGINT NOT NULL,
    "accepted_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "journal_receipts_pkey" PRIMARY KEY ("session_id","client_message_id")
);

-- CreateIndex
CREATE INDEX "journal_submissions_session_id_epoch_sequence_idx" ON "journal_submissions"("session_id", "epoch", "sequence");

-- CreateIndex
CREATE INDEX "journal_submissions_session_id_dispatch_state_submitted_at_idx" ON "journal_submissions"("session_id", "dispatch_state", "submitted_at");

-- CreateIndex
CREATE INDEX "journal_submissions_owner_id_access_id_edge_id_session_id_idx" ON "journal_submissions"("owner_id", "access_id", "edge_id", "session_id");

-- CreateIndex
CREATE INDEX "journal_receipts_owner_id_access_id_edge_id_session_id_idx" ON "journal_receipts"("owner_id", "access_id", "edge_id", "session_id");

-- Rows stored before sequences existed keep their idempotency key (session, epoch, revision).
UPDATE "journal" SET "legacy_revision" = "revision" WHERE "sequence" IS NULL;

-- CreateIndex
CREATE UNIQUE INDEX "journal_legacy_revision_key" ON "journal"("session_id", "epoch", "legacy_revision");
