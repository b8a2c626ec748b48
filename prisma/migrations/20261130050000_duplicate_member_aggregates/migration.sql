-- What a kept group's score, reasons and 10 oldest follow from, read per group from an index rather
-- than from every member (docs/duplicates.md "How it stays fast", issue #72): a group that loses a
-- contact or a link is brought up to date by a search bounded by what changed
-- (src/contacts/duplicate-groups.ts), which no longer reads the whole group to find its score.
--
-- Groups kept so far lack the new columns: every account's are dropped and built again by its next
-- read (which marks it kept again; writes meanwhile only look, as for an account never read).
DELETE FROM "duplicate_queue";
DELETE FROM "duplicate_pairs";
DELETE FROM "duplicate_members";
DELETE FROM "duplicate_groups";
DELETE FROM "duplicate_state";

-- Per member: the best similarity of its name pairs (those where it is `a`), and whether another
-- contact shares its e-mail key or its phone key. A group has a reason when one of its members does.
ALTER TABLE "duplicate_members" ADD COLUMN "name_best" DOUBLE PRECISION,
ADD COLUMN "email_linked" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "phone_linked" BOOLEAN NOT NULL DEFAULT false;

-- A group's 10 oldest (contact ids are UUIDv7: their order is their creation's), its best name
-- similarity, whether it has an e-mail or a phone link: each one index probe.
DROP INDEX "duplicate_members_account_id_grp_idx";
CREATE INDEX "duplicate_members_account_id_grp_contact_id_idx" ON "duplicate_members"("account_id", "grp", "contact_id");
CREATE INDEX "duplicate_members_account_id_grp_name_best_idx" ON "duplicate_members"("account_id", "grp", "name_best");
CREATE INDEX "duplicate_members_account_id_grp_email_linked_idx" ON "duplicate_members"("account_id", "grp", "email_linked");
CREATE INDEX "duplicate_members_account_id_grp_phone_linked_idx" ON "duplicate_members"("account_id", "grp", "phone_linked");
-- The members that shared a key with a contact whose key changed or who was deleted (the queue
-- keeps no address or number; the member row keeps the key's hash until the read).
CREATE INDEX "duplicate_members_account_id_email_key_idx" ON "duplicate_members"("account_id", "email_key");
CREATE INDEX "duplicate_members_account_id_phone_key_idx" ON "duplicate_members"("account_id", "phone_key");
