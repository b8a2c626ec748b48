-- Imports take `object=companies` (docs/decisions.md §21, docs/imports.md).
-- AlterEnum
ALTER TYPE "import_object" ADD VALUE 'companies';
