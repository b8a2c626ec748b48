-- The trash (docs/decisions.md §22, docs/trash.md): a deleted contact, deal or company moves here,
-- its row and the rows that pointed at it as JSON, until restored or purged after
-- TRASH_RETENTION_DAYS. A table of its own rather than a deleted_at column on the live tables: every
-- read, total, search, report, export and match of those keeps reading live rows only, unchanged.

-- CreateTable
CREATE TABLE "trash_items" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "record_type" VARCHAR(16) NOT NULL,
    "record_id" UUID NOT NULL,
    "row" JSONB NOT NULL,
    "links" JSONB NOT NULL,
    "deleted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor_type" VARCHAR(16) NOT NULL,
    "actor_id" VARCHAR(64),

    CONSTRAINT "trash_items_pkey" PRIMARY KEY ("account_id","id")
);

-- CreateIndex
CREATE INDEX "trash_items_account_id_deleted_at_id_idx" ON "trash_items"("account_id", "deleted_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "trash_items_record_id_idx" ON "trash_items"("record_id");

-- CreateIndex
CREATE INDEX "trash_items_deleted_at_idx" ON "trash_items"("deleted_at");

-- CreateIndex
CREATE UNIQUE INDEX "trash_items_account_id_record_id_key" ON "trash_items"("account_id", "record_id");

-- AddForeignKey
ALTER TABLE "trash_items" ADD CONSTRAINT "trash_items_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
