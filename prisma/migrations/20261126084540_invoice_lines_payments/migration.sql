-- CreateEnum
CREATE TYPE "payment_method" AS ENUM ('card', 'bank_transfer', 'cash', 'check', 'other');

-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "amount_paid" DECIMAL(15,3) NOT NULL DEFAULT 0,
ADD COLUMN     "currency" VARCHAR(3) NOT NULL DEFAULT 'USD',
ADD COLUMN     "discount_total" DECIMAL(15,3) NOT NULL DEFAULT 0,
ADD COLUMN     "memo" VARCHAR(2000),
ADD COLUMN     "paid_at" TIMESTAMPTZ(3),
ADD COLUMN     "subtotal" DECIMAL(15,3) NOT NULL DEFAULT 0,
ADD COLUMN     "tax_total" DECIMAL(15,3) NOT NULL DEFAULT 0,
ALTER COLUMN "amount" SET DATA TYPE DECIMAL(15,3);

-- An invoice made from `amount` alone has no lines and subtotal = total = amount (docs/decisions.md §20).
UPDATE "invoices" SET "subtotal" = "amount";

-- CreateTable
CREATE TABLE "invoice_lines" (
    "id" UUID NOT NULL,
    "invoice_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "description" VARCHAR(500) NOT NULL,
    "quantity" DECIMAL(11,4) NOT NULL,
    "unit_price" DECIMAL(15,3) NOT NULL,
    "discount_percent" DECIMAL(6,3) NOT NULL,
    "tax_rate" DECIMAL(6,3) NOT NULL,
    "amount" DECIMAL(15,3) NOT NULL,
    "tax" DECIMAL(15,3) NOT NULL,

    CONSTRAINT "invoice_lines_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "payments" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "invoice_id" UUID NOT NULL,
    "amount" DECIMAL(15,3) NOT NULL,
    "currency" VARCHAR(3) NOT NULL,
    "method" "payment_method" NOT NULL,
    "reference" VARCHAR(255),
    "paid_at" TIMESTAMPTZ(3) NOT NULL,
    "refunded_amount" DECIMAL(15,3) NOT NULL DEFAULT 0,
    "refunded_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payments_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "invoice_lines_invoice_id_position_key" ON "invoice_lines"("invoice_id", "position");

-- CreateIndex
CREATE INDEX "payments_invoice_id_created_at_id_idx" ON "payments"("invoice_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "payments_account_id_paid_at_idx" ON "payments"("account_id", "paid_at");

-- AddForeignKey
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_invoice_id_fkey" FOREIGN KEY ("invoice_id") REFERENCES "invoices"("id") ON DELETE CASCADE ON UPDATE CASCADE;
