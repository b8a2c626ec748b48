import type { ExecutionResult } from 'graphql/index.js';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { queryTooComplex, rateLimited } from '../errors.js';
import type { BudgetResult, BudgetRule, RateLimiter } from '../ratelimit/limiter.js';
import { GRAPHQL_LIMITS } from '../graphql/armor.js';
import { documentCost } from '../graphql/cost.js';

/** Each user's cost budget (docs/decisions.md §11): 20,000 points a minute, leaking back steadily. */
export const COST_BUDGET: BudgetRule = { name: 'graphql-cost', points: 20_000, window: '1m' };

/** What every /graphql answer carries in `extensions.cost` (docs/graphql.md#cost-and-budget). */
export type CostExtension = { requested: number; remaining: number; limit: number; resetSeconds: number };

/**
 * The §11 cost limits on /graphql, per operation (so each operation of a batch counts): the cost is
 * computed before anything runs; past the ceiling the operation is refused (QUERY_TOO_COMPLEX, with
 * its cost) before any SQL; else its whole cost is spent from the caller's budget (Redis when
 * configured, shared by every instance), root fields with REST limits of their own included, and an operation that does not fit is RATE_LIMITED with
 * `retryAfter`. REST runs its own fixed operations under its endpoints' limits and is not charged.
 */
export function useCost(limiter: RateLimiter): Plugin {
  const spend = (ctx: Context, points: number) => spendFrom(limiter, ctx, points);
  return {
    onExecute: async ({ args, setResultAndStopExecution }) => {
      const ctx = args.contextValue as unknown as Context;
      if (new URL(ctx.request.url).pathname !== '/graphql') return;
      const cost = documentCost(args.schema, args.document, args.operationName, (args.variableValues ?? {}) as Record<string, unknown>);
      if (cost === null) return;
      if (cost > GRAPHQL_LIMITS.maxCost) {
        const budget = await spend(ctx, 0);
        setResultAndStopExecution({ errors: [queryTooComplex(cost, GRAPHQL_LIMITS.maxCost)], extensions: { cost: shown(0, budget) } }); // refused: nothing spent
        return;
      }
      const budget = await spend(ctx, cost);
      if (!budget.allowed) {
        // The Retry-After and RateLimit-* headers say the same as the error (src/app.ts useResponseHeaders).
        ctx.state.rateLimit = { allowed: false, limit: budget.limit, remaining: budget.remaining, resetSeconds: budget.retryAfter };
        setResultAndStopExecution({ errors: [rateLimited(budget.retryAfter)], extensions: { cost: shown(cost, budget) } });
        return;
      }
      return {
        onExecuteDone: ({ result, setResult }) => {
          if (isResult(result)) setResult({ ...result, extensions: { ...result.extensions, cost: shown(cost, budget) } });
        },
      };
    },
  };
}

/** The caller's budget: a signed-in user's own, else the client address's (public fields). */
async function spendFrom(limiter: RateLimiter, ctx: Context, points: number): Promise<BudgetResult> {
  let identity: string;
  try {
    identity = `user:${(await ctx.viewer()).id}`;
  } catch {
    identity = `ip:${ctx.limitAddress}`; // anonymous or a bad token: the fields themselves answer UNAUTHENTICATED
  }
  return limiter.spend(COST_BUDGET, identity, points);
}

const shown = (requested: number, budget: BudgetResult): CostExtension => ({
  requested,
  remaining: budget.remaining,
  limit: budget.limit,
  resetSeconds: budget.resetSeconds,
});

const isResult = (value: unknown): value is ExecutionResult => typeof value === 'object' && value !== null && !(Symbol.asyncIterator in value);
