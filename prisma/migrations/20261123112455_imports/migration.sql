-- CreateEnum
CREATE TYPE "import_object" AS ENUM ('contacts', 'deals');

-- CreateEnum
CREATE TYPE "import_status" AS ENUM ('queued', 'running', 'completed', 'failed', 'cancelled');

-- CreateTable
CREATE TABLE "imports" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "object" "import_object" NOT NULL,
    "status" "import_status" NOT NULL DEFAULT 'queued',
    "match_on" VARCHAR(20),
    "file_name" VARCHAR(255),
    "headers" TEXT[],
    "columns" JSONB NOT NULL,
    "unknown_columns" TEXT[],
    "rows_total" INTEGER,
    "rows_processed" INTEGER NOT NULL DEFAULT 0,
    "done_seq" INTEGER NOT NULL DEFAULT 0,
    "created" INTEGER NOT NULL DEFAULT 0,
    "updated" INTEGER NOT NULL DEFAULT 0,
    "unchanged" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "created_by" UUID,
    "lease_owner" UUID,
    "lease_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "error" VARCHAR(500),

    CONSTRAINT "imports_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "import_rows" (
    "account_id" UUID NOT NULL,
    "import_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "line" INTEGER NOT NULL,
    "cells" JSON NOT NULL,

    CONSTRAINT "import_rows_pkey" PRIMARY KEY ("account_id","import_id","seq")
);

-- CreateTable
CREATE TABLE "import_errors" (
    "account_id" UUID NOT NULL,
    "import_id" UUID NOT NULL,
    "line" INTEGER NOT NULL,
    "cells" JSON NOT NULL,
    "details" JSONB NOT NULL,

    CONSTRAINT "import_errors_pkey" PRIMARY KEY ("account_id","import_id","line")
);

-- CreateIndex
CREATE INDEX "imports_account_id_created_at_id_idx" ON "imports"("account_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "imports_status_created_at_idx" ON "imports"("status", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "imports_account_id_id_key" ON "imports"("account_id", "id");

-- AddForeignKey
ALTER TABLE "imports" ADD CONSTRAINT "imports_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "imports" ADD CONSTRAINT "imports_created_by_fkey" FOREIGN KEY ("created_by") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "import_rows" ADD CONSTRAINT "import_rows_account_id_import_id_fkey" FOREIGN KEY ("account_id", "import_id") REFERENCES "imports"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "import_errors" ADD CONSTRAINT "import_errors_account_id_import_id_fkey" FOREIGN KEY ("account_id", "import_id") REFERENCES "imports"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
