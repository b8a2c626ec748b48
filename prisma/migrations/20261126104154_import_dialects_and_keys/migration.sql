-- AlterTable
ALTER TABLE "imports" ADD COLUMN     "delimiter" VARCHAR(1) NOT NULL DEFAULT ',',
ADD COLUMN     "value_mapping" JSONB NOT NULL DEFAULT '{}';

-- CreateTable
CREATE TABLE "import_keys" (
    "account_id" UUID NOT NULL,
    "import_id" UUID NOT NULL,
    "digest" BYTEA NOT NULL,
    "line" INTEGER NOT NULL,

    CONSTRAINT "import_keys_pkey" PRIMARY KEY ("account_id","import_id","digest")
);

-- AddForeignKey
ALTER TABLE "import_keys" ADD CONSTRAINT "import_keys_account_id_import_id_fkey" FOREIGN KEY ("account_id", "import_id") REFERENCES "imports"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
