/**
 * `npm run measure:ha-failover`: what a SIGKILL of the primary does to users switching, on a lab started with
 * `npm start -- --ha` (Patroni, etcd, HAProxy on /primary). 8 signed-in users switch back to back (two clients
 * per demo user, so they race); after 3 s the primary is killed through the launcher's operator; the load goes
 * on 8 s after Patroni has promoted the standby. Printed: the answers by status, the 500s, the 503s without
 * Retry-After, how long from the kill to the promotion (Patroni's, as the operator saw it) and to the first
 * 200 after it, and the audit once settled. The lab's settings as the failover tier's HTTP test sets them.
 *
 *   BASE_URL (http://127.0.0.1:$PORT), DB_OPERATOR_URL (http://127.0.0.1:$DB_OPERATOR_PORT)
 */
import { setTimeout as pause } from "node:timers/promises";
import { countByStatus } from "../lib/core/status-counts";
import { databaseCluster, operate, promotionAfter } from "../lib/lab/database-nodes";
import { appClient } from "../test/harness/http-client";
import { switchLoad } from "../test/harness/switch-load";

const baseUrl = process.env.BASE_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;
const operatorUrl = process.env.DB_OPERATOR_URL ?? `http://127.0.0.1:${process.env.DB_OPERATOR_PORT ?? 6449}`;
const users = 8;

async function main(): Promise<void> {
  const before = await databaseCluster(operatorUrl);
  if (before?.shape !== "ha") throw new Error(`no --ha lab's operator at ${operatorUrl}`);
  const primary = before.nodes.find((node) => node.role === "primary");
  if (!primary) throw new Error(`no primary among ${JSON.stringify(before.nodes)}`);
  const client = appClient(baseUrl);
  await client.configure({
    leaseTtlMs: 2_000,
    reconcileAfterMs: 500,
    provider: { latencyMode: "fixed", latencyMs: 100, jitterMs: 0 },
  });
  const load = await switchLoad(baseUrl, users);
  const loadStarted = Date.now();
  await pause(3_000);
  const killedAt = Date.now();
  await operate("POST", `/nodes/${primary.name}/kill`, undefined, operatorUrl);
  const promoted = await promotionAfter(new Date(killedAt), primary.name, { limitMs: 120_000, operatorUrl });
  if (!promoted) throw new Error("Patroni promoted no standby within 2 minutes");
  const promotion = { node: promoted.node, afterMs: promoted.at.getTime() - killedAt };
  await pause(8_000);
  await load.stop();
  const killedAtInLoad = killedAt - loadStarted;
  const firstSuccess = load.answers.find(
    (answer) => answer.at > killedAtInLoad + promotion.afterMs && answer.status === 200,
  );
  const settleStarted = performance.now();
  let audit = await client.audit();
  while (!audit.settled && performance.now() - settleStarted < 120_000) {
    await pause(250);
    audit = await client.audit();
  }
  const result = {
    killed: primary.name,
    promoted: promotion.node,
    killToPromotionMs: promotion.afterMs,
    killToFirst200AfterPromotionMs: firstSuccess ? firstSuccess.at - killedAtInLoad : null,
    answers: countByStatus(load.answers),
    serverErrors: load.answers.filter((answer) => answer.status >= 500 && answer.status !== 503).length,
    unavailableWithoutRetryAfter: load.answers.filter((answer) => answer.status === 503 && !answer.retryAfter).length,
    notAnswered: load.answers.filter((answer) => answer.status === 0).length,
    audit: { settled: audit.settled, consistent: audit.consistent, violations: audit.violations },
    settledAfterLoadMs: Math.round(performance.now() - settleStarted),
  };
  console.log(JSON.stringify(result, null, 2));
}

await main();
