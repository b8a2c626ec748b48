-- Every record has updatedAt (docs/decisions.md §11). Rows that existed before have not changed since
-- they were created: their updated_at starts at created_at, so an incremental sync by updatedAt
-- does not see the whole table as changed at migration time.

-- AlterTable
ALTER TABLE "bookings" ADD COLUMN     "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "contracts" ADD COLUMN     "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "form_submissions" ADD COLUMN     "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "galleries" ADD COLUMN     "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "pipeline_stages" ADD COLUMN     "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "proposals" ADD COLUMN     "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "workflows" ADD COLUMN     "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

UPDATE "bookings" SET "updated_at" = "created_at";
UPDATE "contracts" SET "updated_at" = "created_at";
UPDATE "form_submissions" SET "updated_at" = "created_at";
UPDATE "galleries" SET "updated_at" = "created_at";
UPDATE "pipeline_stages" SET "updated_at" = "created_at";
UPDATE "proposals" SET "updated_at" = "created_at";
UPDATE "workflows" SET "updated_at" = "created_at";
