-- A lead-form field may fill a contact's custom field (docs/custom-fields.md#where-values-go) by
-- its key, and three field types render the inputs such fields need (a number, a day, a URL).
-- Adding enum values and a nullable column rewrites no table.
-- AlterEnum
ALTER TYPE "form_field_type" ADD VALUE 'number';
ALTER TYPE "form_field_type" ADD VALUE 'date';
ALTER TYPE "form_field_type" ADD VALUE 'url';

-- AlterTable
ALTER TABLE "lead_form_fields" ADD COLUMN     "custom_field" VARCHAR(50);
