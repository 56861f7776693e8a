/**
 * `npm run soak [-- --attempts N --strategy lease]`: the model checker at length. Two app instances on
 * one fresh database; schedules of up to 40 concurrent switches each, drawn by fast-check, until at least
 * N switch attempts (default 10,000) have been made; prints the answers and every schedule that failed.
 */
import fc from "fast-check";
import { parseArgs } from "node:util";
import { prepareDatabase } from "../db/prepare";
import { startApp } from "../test/harness/app-server";
import { databaseFor } from "../test/harness/databases";
import { appClient } from "../test/harness/http-client";
import { checkSchedule, holds, scheduleArbitrary, type Checked } from "../test/harness/schedules";

const { values } = parseArgs({
  options: { attempts: { type: "string", default: "10000" }, strategy: { type: "string", default: "lease" } },
});
const target = Number(values.attempts);
const strategy = values.strategy!;

const databaseUrl = await prepareDatabase(databaseFor("soak"), { fresh: true });
const ports = [Number(process.env.SOAK_APP_PORT ?? 3220), Number(process.env.SOAK_SECOND_APP_PORT ?? 3221)];
const apps = await Promise.all(ports.map((port) => startApp({ databaseUrl, port })));
const instances = apps.map((app) => appClient(app.baseUrl));

const answers = new Map<string, number>();
const failures: { schedule: unknown; checked: Checked }[] = [];
let attempts = 0;
let schedules = 0;
const started = Date.now();
try {
  // More schedules than needed: each holds at least two attempts; the loop stops at the target.
  for (const schedule of fc.sample(scheduleArbitrary(2, 40), target)) {
    if (attempts >= target) break;
    const checked = await checkSchedule(instances[0]!, instances, schedule, strategy);
    schedules++;
    attempts += checked.outcomes.length;
    for (const { status, type } of checked.outcomes)
      answers.set(`${status} ${type ?? ""}`.trim(), (answers.get(`${status} ${type ?? ""}`.trim()) ?? 0) + 1);
    if (!holds(checked)) failures.push({ schedule, checked });
    process.stdout.write(
      `\r${attempts} attempts in ${schedules} schedules, ${failures.length} failed, ${Math.round((Date.now() - started) / 1000)} s`,
    );
  }
} finally {
  await Promise.all(apps.map((app) => app.stop()));
}
console.log(`\n\n${strategy}: ${attempts} switch attempts in ${schedules} schedules on 2 instances`);
console.table([...answers.entries()].sort().map(([answer, count]) => ({ answer, count })));
for (const { schedule, checked } of failures) {
  console.log(
    `FAILED: ${JSON.stringify(schedule)}\n  unexpected: ${JSON.stringify(checked.unexpected)}; ` +
      `leases freed: ${checked.leasesFree}; audit: ${JSON.stringify(checked.violations)}`,
  );
}
console.log(failures.length === 0 ? "every schedule settled consistent" : `${failures.length} schedules failed`);
process.exitCode = failures.length === 0 ? 0 : 1;
