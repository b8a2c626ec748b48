-- The overdue job (docs/decisions.md §19 "Billing time") asks, every minute and across all accounts,
-- for the invoices that can still fall due and whose due date has passed. A partial index holds only
-- those (sent, viewed, partial: the states the §8 machine lets move to overdue), in the job's order,
-- so the question reads a short index range, not the table; an invoice leaves the index when it
-- moves on. schema.prisma cannot state a partial index, and the schema engine leaves it out of its diffs.
CREATE INDEX "invoices_due_outstanding_idx" ON "invoices"("due_date", "id") WHERE "status" IN ('sent', 'viewed', 'partial');
