/**
 * Clicks as people send them (issue 28's targets): 3 users clicking together (one switch each), and a storm
 * of 30 clicks at once from one user (one wins, the rest are refused 409 at once). Each wave's wall time runs
 * until every click has answered; the app's CPU per click is read from /proc over the wave and the 300 ms
 * after it, for every instance's processes. On one instance, or on two behind HAProxy.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema";
import { appClient } from "../test/harness/http-client";
import { freshLab } from "./http-load";
import { processesCpuMs } from "./process-cpu";
import { repeated, type Repeated } from "./stats";

export type ClickKind = "3 users together" | "30 clicks at once";

export interface ClicksResult {
  kind: ClickKind;
  instances: 1 | 2;
  /** The app's pool (the lab's setting). */
  poolSize: number;
  clicks: number;
  wallMs: Repeated;
  /** Null without /proc. */
  cpuMsPerClick: Repeated | null;
  statuses: Record<string, number>;
  consistent: boolean;
}

export const clickShapes: Record<ClickKind, { users: number; clicksEach: number }> = {
  "3 users together": { users: 3, clicksEach: 1 },
  "30 clicks at once": { users: 1, clicksEach: 30 },
};

/**
 * A 200 that changed nothing: the identity was already primary (the contract's "already primary"), as a click
 * that reaches the app after its wave's switch has saved finds it. Counted apart from the switch's own 200.
 */
export const alreadyPrimary = "200 already primary";

const answerKey = (answer: { status: number; body: { changed?: boolean } | null }) =>
  answer.status === 200 && answer.body?.changed === false ? alreadyPrimary : String(answer.status);

/** `repetitions` waves of `kind` against `baseUrl` (one instance or the balancer), after a warm-up wave. */
export async function clickWaves(
  baseUrl: string,
  db: Kysely<Database>,
  options: {
    kind: ClickKind;
    instances: 1 | 2;
    appPids: number[];
    latencyMs: number;
    poolSize: number;
    repetitions: number;
  },
  progress: (note: string) => void,
): Promise<ClicksResult> {
  const { users: userCount, clicksEach } = clickShapes[options.kind];
  const lab = appClient(baseUrl);
  const users = await freshLab(lab, db, userCount, {
    strategy: "lease",
    poolSize: options.poolSize,
    latencyMs: options.latencyMs,
  });
  const clients = await Promise.all(users.map((user) => lab.signedIn(user.id)));
  const primary = users.map((user) => user.identities[0]);
  const statuses: Record<string, number> = {};
  const wave = async () => {
    const answered = await Promise.all(
      users.map((user, index) => {
        const target = primary[index] === user.identities[0] ? user.identities[1] : user.identities[0];
        return Promise.all(Array.from({ length: clicksEach }, () => clients[index]!.promote(user.id, target)));
      }),
    );
    answered.forEach((answers, index) => {
      const won = answers.find((answer) => answer.status === 200);
      if (won) primary[index] = won.body.primaryIdentityId;
    });
    return answered.flat().map(answerKey);
  };
  await wave();
  const walls: number[] = [];
  const cpu: number[] = [];
  for (let repetition = 0; repetition < options.repetitions; repetition++) {
    progress(
      `clicks, ${options.kind}, ${options.instances} instance(s): wave ${repetition + 1}/${options.repetitions}`,
    );
    const cpuBefore = processesCpuMs(options.appPids);
    const started = performance.now();
    for (const status of await wave()) statuses[status] = (statuses[status] ?? 0) + 1;
    walls.push(performance.now() - started);
    await sleep(300);
    const cpuAfter = processesCpuMs(options.appPids);
    if (cpuBefore !== null && cpuAfter !== null) cpu.push((cpuAfter - cpuBefore) / (userCount * clicksEach));
  }
  return {
    kind: options.kind,
    instances: options.instances,
    poolSize: options.poolSize,
    clicks: userCount * clicksEach,
    wallMs: repeated(walls),
    cpuMsPerClick: cpu.length === walls.length ? repeated(cpu) : null,
    statuses,
    consistent: (await lab.audit()).consistent,
  };
}
