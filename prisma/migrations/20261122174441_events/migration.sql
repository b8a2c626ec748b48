-- CreateTable
CREATE TABLE "events" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "type" VARCHAR(64) NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor_type" VARCHAR(16) NOT NULL,
    "actor_id" VARCHAR(64),
    "subject_id" UUID,
    "contact_id" UUID,
    "data" JSONB NOT NULL,
    "published_at" TIMESTAMPTZ(3),

    CONSTRAINT "events_pkey" PRIMARY KEY ("account_id","id")
);

-- CreateTable
CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "url" VARCHAR(2048) NOT NULL,
    "event_types" TEXT[],
    "description" VARCHAR(500),
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" VARCHAR(500),
    "secret_ciphertext" VARCHAR(200) NOT NULL,
    "failing_since" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("account_id","id")
);

-- CreateTable
CREATE TABLE "webhook_messages" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "event_id" UUID NOT NULL,
    "status" VARCHAR(16) NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_messages_pkey" PRIMARY KEY ("account_id","id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "event_id" UUID NOT NULL,
    "attempt" INTEGER NOT NULL,
    "status_code" INTEGER,
    "duration_ms" INTEGER,
    "error" VARCHAR(500),
    "succeeded" BOOLEAN NOT NULL,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("account_id","id")
);

-- CreateIndex
CREATE INDEX "events_account_id_occurred_at_id_idx" ON "events"("account_id", "occurred_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "events_account_id_subject_id_occurred_at_id_idx" ON "events"("account_id", "subject_id", "occurred_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "events_account_id_contact_id_occurred_at_id_idx" ON "events"("account_id", "contact_id", "occurred_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "events_occurred_at_idx" ON "events"("occurred_at");

-- CreateIndex
CREATE INDEX "events_published_at_occurred_at_idx" ON "events"("published_at", "occurred_at");

-- CreateIndex
CREATE INDEX "webhook_endpoints_account_id_created_at_idx" ON "webhook_endpoints"("account_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_endpoints_id_key" ON "webhook_endpoints"("id");

-- CreateIndex
CREATE INDEX "webhook_messages_status_next_attempt_at_idx" ON "webhook_messages"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_messages_account_id_event_id_idx" ON "webhook_messages"("account_id", "event_id");

-- CreateIndex
CREATE INDEX "webhook_messages_account_id_endpoint_id_idx" ON "webhook_messages"("account_id", "endpoint_id");

-- CreateIndex
CREATE INDEX "webhook_deliveries_account_id_endpoint_id_attempted_at_id_idx" ON "webhook_deliveries"("account_id", "endpoint_id", "attempted_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "webhook_deliveries_attempted_at_idx" ON "webhook_deliveries"("attempted_at");

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_messages" ADD CONSTRAINT "webhook_messages_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_messages" ADD CONSTRAINT "webhook_messages_account_id_endpoint_id_fkey" FOREIGN KEY ("account_id", "endpoint_id") REFERENCES "webhook_endpoints"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_messages" ADD CONSTRAINT "webhook_messages_account_id_event_id_fkey" FOREIGN KEY ("account_id", "event_id") REFERENCES "events"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_account_id_endpoint_id_fkey" FOREIGN KEY ("account_id", "endpoint_id") REFERENCES "webhook_endpoints"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
