-- Per-edge credentials (issue 11): a token generation and the edge's NATS user per connector,
-- and the NATS users revoked by rotation or deletion.
ALTER TABLE "connectors" ADD COLUMN "credential_generation" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "connectors" ADD COLUMN "nats_user_key" TEXT;

CREATE TABLE "revoked_nats_users" (
    "public_key" TEXT NOT NULL,
    "edge_id" BIGINT NOT NULL,
    "revoked_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "revoked_nats_users_pkey" PRIMARY KEY ("public_key")
);
