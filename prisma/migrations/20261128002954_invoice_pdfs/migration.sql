-- An invoice's PDF as last drawn (docs/decisions.md §26): a repeated download of the same version
-- draws nothing. One row per invoice, replaced by each new version; it goes with its invoice, with
-- its account, and with the contact whose name it shows (an erasure, docs/decisions.md §24).
-- CreateTable
CREATE TABLE "invoice_pdfs" (
    "account_id" UUID NOT NULL,
    "invoice_id" UUID NOT NULL,
    "hash" VARCHAR(64) NOT NULL,
    "contact_id" UUID,
    "bytes" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "invoice_pdfs_pkey" PRIMARY KEY ("account_id","invoice_id")
);

-- CreateIndex
CREATE INDEX "invoice_pdfs_account_id_contact_id_idx" ON "invoice_pdfs"("account_id", "contact_id");

-- AddForeignKey
ALTER TABLE "invoice_pdfs" ADD CONSTRAINT "invoice_pdfs_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invoice_pdfs" ADD CONSTRAINT "invoice_pdfs_account_id_invoice_id_fkey" FOREIGN KEY ("account_id", "invoice_id") REFERENCES "invoices"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invoice_pdfs" ADD CONSTRAINT "invoice_pdfs_account_id_contact_id_fkey" FOREIGN KEY ("account_id", "contact_id") REFERENCES "contacts"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
