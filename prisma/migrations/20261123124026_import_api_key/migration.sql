-- AlterTable
ALTER TABLE "imports" ADD COLUMN     "api_key_id" UUID;

-- AddForeignKey
ALTER TABLE "imports" ADD CONSTRAINT "imports_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE SET NULL ON UPDATE CASCADE;
