-- Workflows that act (docs/workflows.md): a workflow keeps its trigger and actions, each (workflow,
-- event) pair gets one run, and a workflow's mail goes through the invoice mail outbox.
-- AlterTable
ALTER TABLE "invoice_mails" ADD COLUMN     "html_body" TEXT,
ADD COLUMN     "subject" VARCHAR(500),
ADD COLUMN     "text_body" TEXT,
ALTER COLUMN "invoice_id" DROP NOT NULL;

-- AlterTable
ALTER TABLE "workflows" ADD COLUMN     "actions" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "trigger" JSONB,
ADD COLUMN     "trigger_event" VARCHAR(64);

-- CreateTable
CREATE TABLE "workflow_runs" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "workflow_id" UUID NOT NULL,
    "event_id" UUID NOT NULL,
    "status" VARCHAR(16) NOT NULL DEFAULT 'pending',
    "depth" INTEGER NOT NULL DEFAULT 1,
    "next_step" INTEGER NOT NULL DEFAULT 0,
    "steps" JSONB NOT NULL DEFAULT '[]',
    "error" VARCHAR(1000),
    "due_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resume_at" TIMESTAMPTZ(3),
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "workflow_runs_pkey" PRIMARY KEY ("account_id","id")
);

-- CreateIndex
CREATE INDEX "workflow_runs_status_due_at_idx" ON "workflow_runs"("status", "due_at");

-- CreateIndex
CREATE INDEX "workflow_runs_account_id_workflow_id_started_at_id_idx" ON "workflow_runs"("account_id", "workflow_id", "started_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "workflow_runs_account_id_started_at_idx" ON "workflow_runs"("account_id", "started_at");

-- CreateIndex
CREATE UNIQUE INDEX "workflow_runs_account_id_workflow_id_event_id_key" ON "workflow_runs"("account_id", "workflow_id", "event_id");

-- CreateIndex
CREATE INDEX "workflows_account_id_trigger_event_idx" ON "workflows"("account_id", "trigger_event");

-- CreateIndex
CREATE UNIQUE INDEX "workflows_account_id_id_key" ON "workflows"("account_id", "id");

-- AddForeignKey
ALTER TABLE "workflow_runs" ADD CONSTRAINT "workflow_runs_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workflow_runs" ADD CONSTRAINT "workflow_runs_account_id_workflow_id_fkey" FOREIGN KEY ("account_id", "workflow_id") REFERENCES "workflows"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Runs start in the transaction that writes their event, whichever statement writes it (as
-- event_queue's trigger): one INSERT per statement, none for an account without a workflow on the
-- event's type (an index probe). The unique key makes a second run of a pair impossible. The depth is
-- the writing run's plus one: a workflow's step says its own in crm.workflow_depth for its transaction.
CREATE FUNCTION start_workflow_runs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO workflow_runs (id, account_id, workflow_id, event_id, depth, started_at, due_at)
  SELECT gen_random_uuid(), i.account_id, w.id, i.id, coalesce(nullif(current_setting('crm.workflow_depth', true), '')::int, 0) + 1, i.occurred_at, i.occurred_at
  FROM inserted i JOIN workflows w ON w.account_id = i.account_id AND w.trigger_event = i.type AND w.active
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER events_start_workflow_runs AFTER INSERT ON "events" REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION start_workflow_runs();
