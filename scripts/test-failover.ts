/**
 * `npm run test:failover`: the failover tier (vitest project `failover`): the lease's suite and the tier's files on
 * a primary with a synchronous standby, a promotion before each file; the model checker with failover events;
 * the app's HTTP tests across a promotion (they need `npm run build` first). Its files share one pair of nodes:
 * one after another. First the system's programs it needs (scripts/parts/system-parts.ts), as `npm test` does.
 * Not in `npm test` (its 10 minutes): `.ci/run` runs it after.
 */
import { spawnSync } from "node:child_process";
import { ensureSystemParts, failoverSystemParts } from "./parts/system-parts";

const stop = ensureSystemParts(undefined, console.log, {
  parts: failoverSystemParts,
  neededBy: "npm run test:failover",
});
if (stop) {
  console.error(stop);
  process.exit(1);
}
const started = performance.now();
const vitest = spawnSync(
  "npx",
  ["vitest", "run", "--project", "failover", "--max-workers", "1", ...process.argv.slice(2)],
  { stdio: "inherit" },
);
console.log(`test:failover took ${Math.round((performance.now() - started) / 1000)} s`);
process.exit(vitest.status ?? 1);
