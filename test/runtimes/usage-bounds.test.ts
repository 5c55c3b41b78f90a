// Agents report their own usage, and are hostile: what svc records is held within bounds, so no
// claim can break a total it is added to (GET /runs' run_totals, the analytics sums).
import test from 'ava';
import { boundedUsage, MAX_REPORTED_COST_USD, MAX_REPORTED_TOKENS } from '../../activities/runtimes/types.ts';

const claim = (costUsd: number | null, tokens: number | null = null) => ({
  costUsd,
  tokensInput: tokens,
  tokensOutput: tokens,
  tokensCacheRead: null,
  tokensCacheWrite: null,
});

test('an honest claim is kept as it is', (t) => {
  t.deepEqual(boundedUsage(claim(0.42, 1200)), claim(0.42, 1200));
  t.is(boundedUsage(null), null);
});

test('a claim past the bounds, negative or not finite is held to them', (t) => {
  t.is(boundedUsage(claim(9.3e9))!.costUsd, MAX_REPORTED_COST_USD);
  t.is(boundedUsage(claim(1e300))!.costUsd, MAX_REPORTED_COST_USD);
  t.is(boundedUsage(claim(Infinity))!.costUsd, MAX_REPORTED_COST_USD);
  t.is(boundedUsage(claim(NaN))!.costUsd, MAX_REPORTED_COST_USD);
  t.is(boundedUsage(claim(-5))!.costUsd, 0);
  t.is(boundedUsage(claim(null, 1e30))!.tokensInput, MAX_REPORTED_TOKENS);
  t.is(boundedUsage(claim(null, 12.6))!.tokensOutput, 13, 'tokens are whole');
});
