-- Custom fields (docs/custom-fields.md): an account's definitions, and on each of the four records
-- a JSONB object of values by key. Adding a column with a constant default rewrites no table.
-- CreateEnum
CREATE TYPE "custom_field_object" AS ENUM ('CONTACT', 'DEAL', 'COMPANY', 'INVOICE');

-- CreateEnum
CREATE TYPE "custom_field_type" AS ENUM ('TEXT', 'NUMBER', 'DATE', 'BOOLEAN', 'SELECT', 'MULTI_SELECT', 'URL', 'EMAIL', 'PHONE');

-- AlterTable
ALTER TABLE "companies" ADD COLUMN     "custom_fields" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "contacts" ADD COLUMN     "custom_fields" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "deals" ADD COLUMN     "custom_fields" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "custom_fields" JSONB NOT NULL DEFAULT '{}';

-- CreateTable
CREATE TABLE "custom_field_definitions" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "object" "custom_field_object" NOT NULL,
    "key" VARCHAR(50) NOT NULL,
    "label" VARCHAR(100) NOT NULL,
    "type" "custom_field_type" NOT NULL,
    "options" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "required" BOOLEAN NOT NULL DEFAULT false,
    "archived" BOOLEAN NOT NULL DEFAULT false,
    "position" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "custom_field_definitions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "custom_field_definitions_account_id_object_key_key" ON "custom_field_definitions"("account_id", "object", "key");

-- AddForeignKey
ALTER TABLE "custom_field_definitions" ADD CONSTRAINT "custom_field_definitions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Filters on a value (`cf.<key>=`, docs/custom-fields.md#filters) read these: containment
-- (`custom_fields @> '{"tier":"gold"}'`) is what jsonb_path_ops indexes, at a fraction of the
-- default operator class's size. The GIN index is not led by account_id (GIN has no column order);
-- the query ANDs it with the account's own index.
CREATE INDEX "contacts_custom_fields_idx" ON "contacts" USING gin ("custom_fields" jsonb_path_ops);
CREATE INDEX "deals_custom_fields_idx" ON "deals" USING gin ("custom_fields" jsonb_path_ops);
CREATE INDEX "companies_custom_fields_idx" ON "companies" USING gin ("custom_fields" jsonb_path_ops);
CREATE INDEX "invoices_custom_fields_idx" ON "invoices" USING gin ("custom_fields" jsonb_path_ops);

-- Definitions are stamped from their transaction's start like every other account table (docs/decisions.md §24).
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "custom_field_definitions" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
