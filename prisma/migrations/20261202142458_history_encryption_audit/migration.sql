-- History content becomes AES-256-GCM ciphertext (docs/contract.md "History at rest"). SQL cannot
-- encrypt, so content stored in clear before this migration is discarded rather than kept in
-- clear: journal rows and archived pages are deleted, session rows keep their key, flags and
-- revision and lose their content (the next snapshot saved for them fills it again).
DELETE FROM "journal";
DELETE FROM "session_history_pages";

-- AlterTable
ALTER TABLE "journal" DROP COLUMN "payload",
ADD COLUMN     "payload" BYTEA NOT NULL;

-- AlterTable
ALTER TABLE "session_histories" DROP COLUMN "title",
ADD COLUMN     "summary" BYTEA,
DROP COLUMN "payload",
ADD COLUMN     "payload" BYTEA,
DROP COLUMN "title_override",
ADD COLUMN     "title_override" BYTEA;

-- AlterTable
ALTER TABLE "session_history_pages" DROP COLUMN "payload",
ADD COLUMN     "payload" BYTEA NOT NULL;

-- CreateTable
CREATE TABLE "audit_records" (
    "id" CHAR(32) NOT NULL,
    "actor_id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "edge_id" TEXT NOT NULL,
    "session_id" TEXT,
    "access_id" TEXT,
    "status" TEXT NOT NULL,
    "success" BOOLEAN NOT NULL,
    "trace_id" CHAR(32),
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_records_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "audit_records_actor_id_occurred_at_idx" ON "audit_records"("actor_id", "occurred_at" DESC);

-- CreateIndex
CREATE INDEX "audit_records_edge_id_occurred_at_idx" ON "audit_records"("edge_id", "occurred_at" DESC);
