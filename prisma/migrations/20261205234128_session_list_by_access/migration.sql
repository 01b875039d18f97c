-- The sessions list index is led by the access alone. With the primary key's first three
-- columns (owner, access, edge) in front, the planner could pick it for a lookup by the whole
-- key (history's row locks before each journal batch) and step over every row of the access:
-- 250 ms instead of 0.6 ms for 64 keys once an access held 1,500 sessions. An access id names
-- one owner and one edge, so the list query loses nothing.
-- The build holds a write lock on session_histories for as long as it takes (one pass over the
-- table); run it in a quiet window on a large table.
-- DropIndex
DROP INDEX "session_histories_list_idx";

-- CreateIndex
CREATE INDEX "session_histories_list_idx" ON "session_histories"("access_id", "deleted", "updated_at" DESC, "session_id" DESC);

-- An access id determines its owner and edge. Without this the planner multiplies the three
-- columns' selectivities as if they were independent and expects one row per access, so it
-- sorts a whole access's rows for a page instead of reading the list index in order.
CREATE STATISTICS "session_histories_scope_stats" (dependencies, ndistinct) ON "owner_id", "access_id", "edge_id" FROM "session_histories";
