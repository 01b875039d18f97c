-- AlterTable
ALTER TABLE "journal" ADD COLUMN     "sequence" BIGINT,
ADD COLUMN     "touched" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- CreateTable
CREATE TABLE "journal_states" (
    "session_id" TEXT NOT NULL,
    "owner_id" TEXT NOT NULL,
    "access_id" CHAR(32) NOT NULL,
    "edge_id" BIGINT NOT NULL,
    "epoch" TEXT NOT NULL,
    "head_sequence" BIGINT NOT NULL,
    "oldest_sequence" BIGINT NOT NULL DEFAULT 1,
    "last_stream_seq" BIGINT NOT NULL,
    "window" INTEGER NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "journal_states_pkey" PRIMARY KEY ("session_id")
);

-- CreateTable
CREATE TABLE "journal_items" (
    "session_id" TEXT NOT NULL,
    "item_id" TEXT NOT NULL,
    "owner_id" TEXT NOT NULL,
    "access_id" CHAR(32) NOT NULL,
    "edge_id" BIGINT NOT NULL,
    "epoch" TEXT NOT NULL,
    "revision" INTEGER NOT NULL,
    "sequence" BIGINT NOT NULL,
    "ordinal" INTEGER NOT NULL,
    "observed_at" TIMESTAMPTZ(3) NOT NULL,
    "body" BYTEA,
    "body_digest" CHAR(64),
    "deleted" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "journal_items_pkey" PRIMARY KEY ("session_id","item_id")
);

-- CreateIndex
CREATE INDEX "journal_states_owner_id_access_id_edge_id_session_id_idx" ON "journal_states"("owner_id", "access_id", "edge_id", "session_id");

-- CreateIndex
CREATE INDEX "journal_items_session_id_deleted_sequence_ordinal_idx" ON "journal_items"("session_id", "deleted", "sequence", "ordinal");

-- CreateIndex
CREATE INDEX "journal_items_owner_id_access_id_edge_id_session_id_idx" ON "journal_items"("owner_id", "access_id", "edge_id", "session_id");

-- CreateIndex
CREATE UNIQUE INDEX "journal_position_key" ON "journal"("session_id", "epoch", "sequence");
