-- AlterTable
ALTER TABLE "contacts" ADD COLUMN     "company_id" UUID,
ADD COLUMN     "owner_id" UUID;

-- AlterTable
ALTER TABLE "deals" ADD COLUMN     "company_id" UUID,
ADD COLUMN     "owner_id" UUID;

-- CreateTable
CREATE TABLE "companies" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "name" VARCHAR(200) NOT NULL,
    "domain" VARCHAR(253),
    "phone" VARCHAR(50),
    "industry" VARCHAR(100),
    "website" VARCHAR(2048),
    "external_id" VARCHAR(255),
    "owner_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "companies_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "companies_account_id_created_at_id_idx" ON "companies"("account_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "companies_account_id_updated_at_id_idx" ON "companies"("account_id", "updated_at", "id");

-- CreateIndex
CREATE INDEX "companies_account_id_name_id_idx" ON "companies"("account_id", "name", "id");

-- CreateIndex
CREATE INDEX "companies_account_id_owner_id_created_at_id_idx" ON "companies"("account_id", "owner_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "companies_owner_id_idx" ON "companies"("owner_id");

-- CreateIndex
CREATE UNIQUE INDEX "companies_account_id_id_key" ON "companies"("account_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "companies_account_id_domain_key" ON "companies"("account_id", "domain");

-- CreateIndex
CREATE UNIQUE INDEX "companies_account_id_external_id_key" ON "companies"("account_id", "external_id");

-- CreateIndex
CREATE INDEX "contacts_account_id_company_id_created_at_id_idx" ON "contacts"("account_id", "company_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "contacts_owner_id_idx" ON "contacts"("owner_id");

-- CreateIndex
CREATE INDEX "deals_account_id_company_id_created_at_id_idx" ON "deals"("account_id", "company_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "deals_owner_id_idx" ON "deals"("owner_id");

-- AddForeignKey
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_account_id_company_id_fkey" FOREIGN KEY ("account_id", "company_id") REFERENCES "companies"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "companies" ADD CONSTRAINT "companies_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "companies" ADD CONSTRAINT "companies_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deals" ADD CONSTRAINT "deals_account_id_company_id_fkey" FOREIGN KEY ("account_id", "company_id") REFERENCES "companies"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deals" ADD CONSTRAINT "deals_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
