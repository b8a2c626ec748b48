-- DropIndex
DROP INDEX "lead_form_fields_form_id_key_key";

-- AlterTable
ALTER TABLE "lead_form_fields" DROP CONSTRAINT "lead_form_fields_pkey",
ADD CONSTRAINT "lead_form_fields_pkey" PRIMARY KEY ("account_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "lead_form_fields_account_id_form_id_key_key" ON "lead_form_fields"("account_id", "form_id", "key");
