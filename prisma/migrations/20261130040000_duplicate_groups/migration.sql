-- Duplicate groups kept between reads (docs/duplicates.md "How it stays fast", decisions §22,
-- issue #72). Reading every name of an account on each call (1.2-1.7 s at 100,000 contacts, a
-- minute at 1,000,000) is replaced by groups stored per account and brought up to date by the read
-- itself from a queue of what changed. A write only queues: one INSERT of the changed ids per
-- statement, and only for an account whose groups have been built (duplicate_state); the pairing,
-- grouping and scoring stay on the read (src/contacts/duplicate-groups.ts).

-- An account whose groups are kept; `built` once the first read has built them all.
CREATE TABLE "duplicate_state" (
    "account_id" UUID NOT NULL,
    "built" BOOLEAN NOT NULL DEFAULT false,
    CONSTRAINT "duplicate_state_pkey" PRIMARY KEY ("account_id")
);

-- Contacts changed since the last read: inserted (old_* null, `moved` false), or updated in a key
-- column or deleted (`moved` true, with the keys they had: where they sat among their company's
-- and domain's names, which the read needs once the row is gone or changed). Emptied by the read.
CREATE TABLE "duplicate_queue" (
    "account_id" UUID NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "contact_id" UUID NOT NULL,
    "moved" BOOLEAN NOT NULL DEFAULT false,
    "old_company" TEXT,
    "old_domain" TEXT,
    "old_name" TEXT,
    CONSTRAINT "duplicate_queue_pkey" PRIMARY KEY ("account_id","seq")
);

-- Pairs of similar names (the name rule: `company` or `domain` block), as the name rule finds them.
CREATE TABLE "duplicate_pairs" (
    "account_id" UUID NOT NULL,
    "a" UUID NOT NULL,
    "b" UUID NOT NULL,
    "rule" TEXT NOT NULL,
    "similarity" DOUBLE PRECISION NOT NULL,
    CONSTRAINT "duplicate_pairs_pkey" PRIMARY KEY ("account_id","a","b","rule")
);
CREATE INDEX "duplicate_pairs_account_id_b_idx" ON "duplicate_pairs"("account_id", "b");

-- Which group each contact of a group is in (grp: the group's label, one of its contacts' ids), with
-- a 64-bit hash of its e-mail and phone keys, so a group is found again without computing every
-- member's keys (and no address or number is copied here).
CREATE TABLE "duplicate_members" (
    "account_id" UUID NOT NULL,
    "contact_id" UUID NOT NULL,
    "grp" UUID NOT NULL,
    "email_key" BIGINT,
    "phone_key" BIGINT,
    CONSTRAINT "duplicate_members_pkey" PRIMARY KEY ("account_id","contact_id")
);
CREATE INDEX "duplicate_members_account_id_grp_idx" ON "duplicate_members"("account_id", "grp");

-- Each group as the API answers it: score, reasons, its 10 oldest contacts (`oldest` the first),
-- read best first; with its size and each reason's best weighted score, so that contacts joining
-- it are added without reading its members.
CREATE TABLE "duplicate_groups" (
    "account_id" UUID NOT NULL,
    "grp" UUID NOT NULL,
    "oldest" UUID NOT NULL,
    "score" DOUBLE PRECISION NOT NULL,
    "reasons" TEXT[],
    "ids" UUID[],
    "size" INTEGER NOT NULL,
    "best" JSONB NOT NULL,
    CONSTRAINT "duplicate_groups_pkey" PRIMARY KEY ("account_id","grp")
);
CREATE INDEX "duplicate_groups_account_id_score_oldest_idx" ON "duplicate_groups"("account_id", "score" DESC, "oldest");

-- One INSERT a statement, for the rows of accounts whose groups are kept (duplicate_state): the ids
-- it wrote; for an update only the rows whose duplicate keys' columns changed, with the keys they
-- had; for a delete every row, with its keys. An account starts being kept by a read that marks it
-- and then waits for every transaction running at the time (src/contacts/duplicate-groups.ts,
-- `refreshDuplicateGroups`): a write that looked before the mark is seen by the build, every later
-- one is queued.
CREATE FUNCTION duplicate_queue_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO duplicate_queue (account_id, contact_id)
    SELECT n.account_id, n.id FROM new_rows n
     WHERE EXISTS (SELECT 1 FROM duplicate_state s WHERE s.account_id = n.account_id);
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO duplicate_queue (account_id, contact_id, moved, old_company, old_domain, old_name)
    SELECT o.account_id, o.id, true, dedupe_company(o.company_id, o.company), dedupe_email_domain(o.email), dedupe_name(o.first_name, o.last_name)
      FROM old_rows o JOIN new_rows n ON n.id = o.id
     WHERE (o.first_name, o.last_name, o.email, o.phone, o.company, o.company_id) IS DISTINCT FROM (n.first_name, n.last_name, n.email, n.phone, n.company, n.company_id)
       AND EXISTS (SELECT 1 FROM duplicate_state s WHERE s.account_id = o.account_id);
  ELSE
    INSERT INTO duplicate_queue (account_id, contact_id, moved, old_company, old_domain, old_name)
    SELECT o.account_id, o.id, true, dedupe_company(o.company_id, o.company), dedupe_email_domain(o.email), dedupe_name(o.first_name, o.last_name)
      FROM old_rows o
     WHERE EXISTS (SELECT 1 FROM duplicate_state s WHERE s.account_id = o.account_id);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER duplicate_queue_insert AFTER INSERT ON "contacts" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION duplicate_queue_apply();
CREATE TRIGGER duplicate_queue_update AFTER UPDATE ON "contacts" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION duplicate_queue_apply();
CREATE TRIGGER duplicate_queue_delete AFTER DELETE ON "contacts" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION duplicate_queue_apply();

-- TRUNCATE fires no DELETE trigger: every account's groups go with the rows, rebuilt on the next read.
CREATE FUNCTION duplicate_queue_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM duplicate_state; DELETE FROM duplicate_queue; DELETE FROM duplicate_pairs; DELETE FROM duplicate_members; DELETE FROM duplicate_groups;
  RETURN NULL;
END $$;
CREATE TRIGGER duplicate_queue_truncate AFTER TRUNCATE ON "contacts" FOR EACH STATEMENT EXECUTE FUNCTION duplicate_queue_truncate();
