-- CreateTable
CREATE TABLE "connectors" (
    "id" BIGSERIAL NOT NULL,
    "owner_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "device" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "connectors_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agent_accesses" (
    "id" CHAR(32) NOT NULL,
    "owner_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "edge_id" BIGINT NOT NULL,
    "installation_id" TEXT NOT NULL,
    "project" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "agent_accesses_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "session_histories" (
    "owner_id" TEXT NOT NULL,
    "access_id" CHAR(32) NOT NULL,
    "edge_id" BIGINT NOT NULL,
    "session_id" TEXT NOT NULL,
    "revision" BIGINT NOT NULL,
    "epoch" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "title" TEXT NOT NULL DEFAULT '',
    "title_override" TEXT,
    "running" BOOLEAN NOT NULL DEFAULT false,
    "closed" BOOLEAN NOT NULL DEFAULT false,
    "deleted" BOOLEAN NOT NULL DEFAULT false,
    "status" TEXT NOT NULL DEFAULT 'ok',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "synced_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "session_histories_pkey" PRIMARY KEY ("owner_id","access_id","edge_id","session_id")
);

-- CreateTable
CREATE TABLE "session_history_pages" (
    "owner_id" TEXT NOT NULL,
    "access_id" CHAR(32) NOT NULL,
    "edge_id" BIGINT NOT NULL,
    "session_id" TEXT NOT NULL,
    "window" INTEGER NOT NULL,
    "revision" BIGINT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "session_history_pages_pkey" PRIMARY KEY ("owner_id","access_id","edge_id","session_id","window")
);

-- CreateTable
CREATE TABLE "journal" (
    "session_id" TEXT NOT NULL,
    "epoch" TEXT NOT NULL,
    "revision" BIGINT NOT NULL,
    "owner_id" TEXT NOT NULL,
    "access_id" CHAR(32) NOT NULL,
    "edge_id" BIGINT NOT NULL,
    "payload" JSONB NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "journal_pkey" PRIMARY KEY ("session_id","epoch","revision")
);

-- CreateIndex
CREATE INDEX "connectors_owner_id_idx" ON "connectors"("owner_id");

-- CreateIndex
CREATE INDEX "agent_accesses_owner_id_created_at_idx" ON "agent_accesses"("owner_id", "created_at");

-- CreateIndex
CREATE INDEX "agent_accesses_edge_id_idx" ON "agent_accesses"("edge_id");

-- CreateIndex
CREATE INDEX "session_histories_list_idx" ON "session_histories"("owner_id", "access_id", "edge_id", "deleted", "updated_at" DESC, "session_id" DESC);

-- CreateIndex
CREATE INDEX "session_histories_sync_idx" ON "session_histories"("deleted", "closed", "synced_at");

-- CreateIndex
CREATE INDEX "journal_owner_id_access_id_edge_id_session_id_idx" ON "journal"("owner_id", "access_id", "edge_id", "session_id");

-- AddForeignKey
ALTER TABLE "agent_accesses" ADD CONSTRAINT "agent_accesses_edge_id_fkey" FOREIGN KEY ("edge_id") REFERENCES "connectors"("id") ON DELETE CASCADE ON UPDATE CASCADE;
