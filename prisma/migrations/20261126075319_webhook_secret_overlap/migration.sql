-- AlterTable
ALTER TABLE "webhook_endpoints" ADD COLUMN     "previous_secret_ciphertext" VARCHAR(200),
ADD COLUMN     "previous_secret_expires_at" TIMESTAMPTZ(3);
