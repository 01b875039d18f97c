-- CreateIndex
CREATE INDEX "journal_submissions_dispatch_state_submitted_at_idx" ON "journal_submissions"("dispatch_state", "submitted_at");
