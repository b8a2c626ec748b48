-- CreateTable
CREATE TABLE "erasure_logs" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "contact_id" UUID NOT NULL,
    "submissions_erased" INTEGER NOT NULL,
    "deals_unlinked" INTEGER NOT NULL,
    "invoices_unlinked" INTEGER NOT NULL,
    "answers_removed" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "erasure_logs_pkey" PRIMARY KEY ("account_id", "id")
);

-- CreateIndex
CREATE INDEX "erasure_logs_account_id_created_at_idx" ON "erasure_logs"("account_id", "created_at");

-- AddForeignKey
ALTER TABLE "erasure_logs" ADD CONSTRAINT "erasure_logs_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "erasure_logs" ADD CONSTRAINT "erasure_logs_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
