-- Imports survive their own failures (docs/imports.md#attempts): claims since the last committed chunk
-- are counted here, so a poison chunk fails its import on its fourth claim, across restarts. The
-- per-import lease becomes a per-worker heartbeat (import_workers), renewed while the worker runs even
-- when a long chunk holds the import's row; a running import left by an old-style lease is resumed at once.
-- AlterTable
ALTER TABLE "imports" DROP COLUMN "lease_until",
ADD COLUMN     "attempt_error" VARCHAR(500),
ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "import_workers" (
    "id" UUID NOT NULL,
    "alive_until" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "import_workers_pkey" PRIMARY KEY ("id")
);
