-- AlterTable
ALTER TABLE "form_submissions" ADD COLUMN     "is_spam" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "lead_forms" ADD COLUMN     "honeypot_field" VARCHAR(100);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "scope" VARCHAR(200) NOT NULL,
    "operation" VARCHAR(50) NOT NULL,
    "key" VARCHAR(255) NOT NULL,
    "request_hash" VARCHAR(64) NOT NULL,
    "result" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "idempotency_keys_account_id_scope_operation_key_key" ON "idempotency_keys"("account_id", "scope", "operation", "key");

-- AddForeignKey
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
