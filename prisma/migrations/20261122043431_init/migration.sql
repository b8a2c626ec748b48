-- CreateEnum
CREATE TYPE "member_role" AS ENUM ('owner', 'member');

-- CreateEnum
CREATE TYPE "contact_type" AS ENUM ('lead', 'client', 'past_client', 'vendor', 'other');

-- CreateEnum
CREATE TYPE "contact_source" AS ENUM ('website', 'referral', 'social_media', 'advertising', 'cold_outreach', 'repeat_client', 'other');

-- CreateEnum
CREATE TYPE "deal_status" AS ENUM ('open', 'won', 'lost', 'abandoned');

-- CreateEnum
CREATE TYPE "invoice_status" AS ENUM ('draft', 'sent', 'viewed', 'partial', 'paid', 'overdue', 'cancelled', 'refunded');

-- CreateEnum
CREATE TYPE "form_field_type" AS ENUM ('text', 'email', 'phone', 'textarea', 'select', 'checkbox', 'hidden');

-- CreateEnum
CREATE TYPE "contact_field" AS ENUM ('first_name', 'last_name', 'email', 'phone', 'company');

-- CreateEnum
CREATE TYPE "export_kind" AS ENUM ('contacts_csv', 'account_json');

-- CreateTable
CREATE TABLE "users" (
    "id" UUID NOT NULL,
    "email" VARCHAR(254),
    "name" VARCHAR(200),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "accounts" (
    "id" UUID NOT NULL,
    "name" VARCHAR(200) NOT NULL,
    "owner_id" UUID NOT NULL,
    "next_invoice_number" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "team_members" (
    "account_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "role" "member_role" NOT NULL DEFAULT 'member',
    "email" VARCHAR(254),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "team_members_pkey" PRIMARY KEY ("account_id","user_id")
);

-- CreateTable
CREATE TABLE "contacts" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "first_name" VARCHAR(100) NOT NULL,
    "last_name" VARCHAR(100),
    "email" VARCHAR(254),
    "phone" VARCHAR(50),
    "company" VARCHAR(200),
    "contact_type" "contact_type" NOT NULL DEFAULT 'lead',
    "source" "contact_source" NOT NULL DEFAULT 'other',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "contacts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "pipeline_stages" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "name" VARCHAR(100) NOT NULL,
    "position" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pipeline_stages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "deals" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "contact_id" UUID,
    "stage_id" UUID,
    "title" VARCHAR(200) NOT NULL,
    "value" DECIMAL(12,2) NOT NULL DEFAULT 0,
    "probability" DOUBLE PRECISION NOT NULL DEFAULT 50,
    "status" "deal_status" NOT NULL DEFAULT 'open',
    "expected_close_date" DATE,
    "closed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "deals_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "invoices" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "contact_id" UUID,
    "invoice_number" VARCHAR(50) NOT NULL,
    "amount" DECIMAL(12,2) NOT NULL,
    "status" "invoice_status" NOT NULL DEFAULT 'draft',
    "due_date" DATE NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "invoices_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "lead_forms" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "name" VARCHAR(200) NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "success_message" VARCHAR(1000) NOT NULL DEFAULT 'Thanks! We''ll be in touch.',
    "redirect_url" VARCHAR(2048),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "lead_forms_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "lead_form_fields" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "form_id" UUID NOT NULL,
    "key" VARCHAR(100) NOT NULL,
    "label" VARCHAR(200) NOT NULL,
    "type" "form_field_type" NOT NULL,
    "required" BOOLEAN NOT NULL DEFAULT false,
    "maps_to" "contact_field",
    "options" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "max_length" INTEGER NOT NULL DEFAULT 1000,
    "position" INTEGER NOT NULL,

    CONSTRAINT "lead_form_fields_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "form_submissions" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "form_id" UUID NOT NULL,
    "contact_id" UUID,
    "data" JSONB NOT NULL,
    "referrer" VARCHAR(2048),
    "page" VARCHAR(2048),
    "client_ip" VARCHAR(64),
    "user_agent" VARCHAR(1000),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "form_submissions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "export_logs" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "kind" "export_kind" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "export_logs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "proposals" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "contact_id" UUID,
    "title" VARCHAR(200) NOT NULL,
    "amount" DECIMAL(12,2),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "proposals_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "contracts" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "contact_id" UUID,
    "title" VARCHAR(200) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "contracts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "galleries" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "contact_id" UUID,
    "title" VARCHAR(200) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "galleries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "bookings" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "contact_id" UUID,
    "title" VARCHAR(200) NOT NULL,
    "starts_at" TIMESTAMPTZ(3) NOT NULL,
    "ends_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "bookings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workflows" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "name" VARCHAR(200) NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workflows_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "accounts_owner_id_idx" ON "accounts"("owner_id");

-- CreateIndex
CREATE INDEX "team_members_user_id_idx" ON "team_members"("user_id");

-- CreateIndex
CREATE INDEX "contacts_account_id_created_at_id_idx" ON "contacts"("account_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "contacts_account_id_contact_type_created_at_id_idx" ON "contacts"("account_id", "contact_type", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "contacts_account_id_email_idx" ON "contacts"("account_id", "email");

-- CreateIndex
CREATE UNIQUE INDEX "contacts_account_id_id_key" ON "contacts"("account_id", "id");

-- CreateIndex
CREATE INDEX "pipeline_stages_account_id_position_idx" ON "pipeline_stages"("account_id", "position");

-- CreateIndex
CREATE UNIQUE INDEX "pipeline_stages_account_id_id_key" ON "pipeline_stages"("account_id", "id");

-- CreateIndex
CREATE INDEX "deals_account_id_created_at_id_idx" ON "deals"("account_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "deals_account_id_status_created_at_id_idx" ON "deals"("account_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "deals_account_id_contact_id_idx" ON "deals"("account_id", "contact_id");

-- CreateIndex
CREATE INDEX "deals_account_id_stage_id_idx" ON "deals"("account_id", "stage_id");

-- CreateIndex
CREATE INDEX "invoices_account_id_created_at_id_idx" ON "invoices"("account_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "invoices_account_id_status_created_at_id_idx" ON "invoices"("account_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "invoices_account_id_contact_id_idx" ON "invoices"("account_id", "contact_id");

-- CreateIndex
CREATE UNIQUE INDEX "invoices_account_id_invoice_number_key" ON "invoices"("account_id", "invoice_number");

-- CreateIndex
CREATE INDEX "lead_forms_account_id_created_at_idx" ON "lead_forms"("account_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "lead_forms_account_id_id_key" ON "lead_forms"("account_id", "id");

-- CreateIndex
CREATE INDEX "lead_form_fields_account_id_form_id_position_idx" ON "lead_form_fields"("account_id", "form_id", "position");

-- CreateIndex
CREATE UNIQUE INDEX "lead_form_fields_form_id_key_key" ON "lead_form_fields"("form_id", "key");

-- CreateIndex
CREATE INDEX "form_submissions_account_id_created_at_idx" ON "form_submissions"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "form_submissions_account_id_form_id_created_at_idx" ON "form_submissions"("account_id", "form_id", "created_at");

-- CreateIndex
CREATE INDEX "export_logs_account_id_created_at_idx" ON "export_logs"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "proposals_account_id_created_at_idx" ON "proposals"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "contracts_account_id_created_at_idx" ON "contracts"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "galleries_account_id_created_at_idx" ON "galleries"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "bookings_account_id_starts_at_idx" ON "bookings"("account_id", "starts_at");

-- CreateIndex
CREATE INDEX "workflows_account_id_created_at_idx" ON "workflows"("account_id", "created_at");

-- AddForeignKey
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "team_members" ADD CONSTRAINT "team_members_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "team_members" ADD CONSTRAINT "team_members_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pipeline_stages" ADD CONSTRAINT "pipeline_stages_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deals" ADD CONSTRAINT "deals_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deals" ADD CONSTRAINT "deals_account_id_contact_id_fkey" FOREIGN KEY ("account_id", "contact_id") REFERENCES "contacts"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deals" ADD CONSTRAINT "deals_account_id_stage_id_fkey" FOREIGN KEY ("account_id", "stage_id") REFERENCES "pipeline_stages"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_account_id_contact_id_fkey" FOREIGN KEY ("account_id", "contact_id") REFERENCES "contacts"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "lead_forms" ADD CONSTRAINT "lead_forms_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "lead_form_fields" ADD CONSTRAINT "lead_form_fields_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "lead_form_fields" ADD CONSTRAINT "lead_form_fields_account_id_form_id_fkey" FOREIGN KEY ("account_id", "form_id") REFERENCES "lead_forms"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "form_submissions" ADD CONSTRAINT "form_submissions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "form_submissions" ADD CONSTRAINT "form_submissions_account_id_form_id_fkey" FOREIGN KEY ("account_id", "form_id") REFERENCES "lead_forms"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "form_submissions" ADD CONSTRAINT "form_submissions_account_id_contact_id_fkey" FOREIGN KEY ("account_id", "contact_id") REFERENCES "contacts"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "export_logs" ADD CONSTRAINT "export_logs_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "export_logs" ADD CONSTRAINT "export_logs_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "proposals" ADD CONSTRAINT "proposals_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "proposals" ADD CONSTRAINT "proposals_account_id_contact_id_fkey" FOREIGN KEY ("account_id", "contact_id") REFERENCES "contacts"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_account_id_contact_id_fkey" FOREIGN KEY ("account_id", "contact_id") REFERENCES "contacts"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "galleries" ADD CONSTRAINT "galleries_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "galleries" ADD CONSTRAINT "galleries_account_id_contact_id_fkey" FOREIGN KEY ("account_id", "contact_id") REFERENCES "contacts"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "bookings" ADD CONSTRAINT "bookings_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "bookings" ADD CONSTRAINT "bookings_account_id_contact_id_fkey" FOREIGN KEY ("account_id", "contact_id") REFERENCES "contacts"("account_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workflows" ADD CONSTRAINT "workflows_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
