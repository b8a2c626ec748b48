-- The runner's claim (src/workflows/workflow-runner.ts) takes the oldest due runs of three statuses.
-- On (status, due_at) that was a bitmap scan of every entry the statuses ever had, then a sort: a
-- burst leaves two dead entries a run (its lease, its end), and a claim read 173,401 of them
-- (101 ms a claim; BENCHMARKS.md "Workflows"). On due_at alone, for the statuses still to run, it is
-- an index scan in order that stops at the batch, and marks the dead entries it passes so that the
-- next claim skips them.
CREATE INDEX "workflow_runs_due_idx" ON "workflow_runs"("due_at") WHERE "status" IN ('pending', 'running', 'waiting');

DROP INDEX "workflow_runs_status_due_at_idx";
