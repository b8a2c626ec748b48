-- CreateEnum
CREATE TYPE "task_status" AS ENUM ('open', 'done');

-- CreateTable
CREATE TABLE "notes" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "body" VARCHAR(10000) NOT NULL,
    "pinned" BOOLEAN NOT NULL DEFAULT false,
    "author_id" UUID,
    "contact_id" UUID,
    "deal_id" UUID,
    "company_id" UUID,
    "listed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "notes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tasks" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "title" VARCHAR(200) NOT NULL,
    "notes" VARCHAR(10000),
    "due_at" TIMESTAMPTZ(3),
    "status" "task_status" NOT NULL DEFAULT 'open',
    "completed_at" TIMESTAMPTZ(3),
    "assignee_id" UUID,
    "contact_id" UUID,
    "deal_id" UUID,
    "company_id" UUID,
    "overdue_notified_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tasks_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "notes_account_id_created_at_id_idx" ON "notes"("account_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "notes_account_id_listed_at_id_idx" ON "notes"("account_id", "listed_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "notes_account_id_updated_at_id_idx" ON "notes"("account_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "notes_account_id_contact_id_listed_at_id_idx" ON "notes"("account_id", "contact_id", "listed_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "notes_account_id_deal_id_listed_at_id_idx" ON "notes"("account_id", "deal_id", "listed_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "notes_account_id_company_id_listed_at_id_idx" ON "notes"("account_id", "company_id", "listed_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "notes_author_id_idx" ON "notes"("author_id");

-- CreateIndex
CREATE UNIQUE INDEX "notes_account_id_id_key" ON "notes"("account_id", "id");

-- CreateIndex
CREATE INDEX "tasks_account_id_created_at_id_idx" ON "tasks"("account_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tasks_account_id_updated_at_id_idx" ON "tasks"("account_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "tasks_account_id_contact_id_created_at_id_idx" ON "tasks"("account_id", "contact_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tasks_account_id_deal_id_created_at_id_idx" ON "tasks"("account_id", "deal_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tasks_account_id_company_id_created_at_id_idx" ON "tasks"("account_id", "company_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tasks_account_id_assignee_id_created_at_id_idx" ON "tasks"("account_id", "assignee_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tasks_assignee_id_idx" ON "tasks"("assignee_id");

-- CreateIndex
CREATE UNIQUE INDEX "tasks_account_id_id_key" ON "tasks"("account_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "deals_account_id_id_key" ON "deals"("account_id", "id");

-- AddForeignKey
ALTER TABLE "notes" ADD CONSTRAINT "notes_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notes" ADD CONSTRAINT "notes_author_id_fkey" FOREIGN KEY ("author_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notes" ADD CONSTRAINT "notes_account_id_contact_id_fkey" FOREIGN KEY ("account_id", "contact_id") REFERENCES "contacts"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notes" ADD CONSTRAINT "notes_account_id_deal_id_fkey" FOREIGN KEY ("account_id", "deal_id") REFERENCES "deals"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notes" ADD CONSTRAINT "notes_account_id_company_id_fkey" FOREIGN KEY ("account_id", "company_id") REFERENCES "companies"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_assignee_id_fkey" FOREIGN KEY ("assignee_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_account_id_contact_id_fkey" FOREIGN KEY ("account_id", "contact_id") REFERENCES "contacts"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_account_id_deal_id_fkey" FOREIGN KEY ("account_id", "deal_id") REFERENCES "deals"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_account_id_company_id_fkey" FOREIGN KEY ("account_id", "company_id") REFERENCES "companies"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- A note is about something: a contact, a deal or a company (docs/decisions.md §21). A task may
-- lose its last target when that record goes (its link is cleared), so only the input requires one.
ALTER TABLE "notes" ADD CONSTRAINT "notes_target_check" CHECK ("contact_id" IS NOT NULL OR "deal_id" IS NOT NULL OR "company_id" IS NOT NULL);

-- Stamps from the transaction's start, as the other records (migration 20261126080000).
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "notes" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "tasks" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();

-- The notes lists' order key: pinned notes first, then newest. Named to fire after the stamps'
-- trigger (triggers of one event fire in name order), so it reads the created_at that is kept.
CREATE FUNCTION note_listed_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.listed_at := CASE WHEN NEW.pinned THEN NEW.created_at + interval '10000 years' ELSE NEW.created_at END;
  RETURN NEW;
END $$;
CREATE TRIGGER stamps_then_listed_at BEFORE INSERT OR UPDATE ON "notes" FOR EACH ROW EXECUTE FUNCTION note_listed_at();

-- The overdue job's look-up (src/activities/overdue.ts): open tasks not yet announced, by due time.
CREATE INDEX "tasks_overdue_due_idx" ON "tasks"("due_at", "id") WHERE "status" = 'open' AND "overdue_notified_at" IS NULL AND "due_at" IS NOT NULL;
