-- AlterTable
ALTER TABLE "lead_forms" ADD COLUMN     "accent_color" VARCHAR(7),
ADD COLUMN     "show_title" BOOLEAN NOT NULL DEFAULT true;
