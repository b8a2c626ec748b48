-- The invoice mail outbox (docs/decisions.md §20 "Sending"): written with sendInvoice, sent after its commit.
-- CreateTable
CREATE TABLE "invoice_mails" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "invoice_id" UUID NOT NULL,
    "to" VARCHAR(320) NOT NULL,
    "status" VARCHAR(16) NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_until" TIMESTAMPTZ(3),
    "last_error" VARCHAR(500),
    "sent_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "invoice_mails_pkey" PRIMARY KEY ("account_id","id")
);

-- CreateIndex
CREATE INDEX "invoice_mails_status_next_attempt_at_idx" ON "invoice_mails"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "invoice_mails_account_id_invoice_id_idx" ON "invoice_mails"("account_id", "invoice_id");

-- AddForeignKey
ALTER TABLE "invoice_mails" ADD CONSTRAINT "invoice_mails_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invoice_mails" ADD CONSTRAINT "invoice_mails_account_id_invoice_id_fkey" FOREIGN KEY ("account_id", "invoice_id") REFERENCES "invoices"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
