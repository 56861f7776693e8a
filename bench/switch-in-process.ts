/**
 * `npx tsx bench/switch-in-process.ts [--apart]`: the switch's database side in one process, without HTTP or a
 * provider (its two calls answer at once), 64 users switching at once: the product's switch as the route runs it
 * (the session's requirement, the lease, the journal) against bare's three statements (bare-statements.ts),
 * taking turns wave by wave. Per switch: the process's CPU, its main thread's CPU and how long that thread waited
 * for a core (the scheduler's run-queue wait, `/proc/self/task/PID/schedstat`, in ns), and the embedded
 * PostgreSQL's CPU (all of the embedded server's processes, their threads' schedstat: run it with nothing else
 * on that server); then, under V8's profiler, what the profile books per switch, and how much of it on
 * `writev`. `--apart` pins this process to
 * the first core and the embedded PostgreSQL to the second (taskset) for the run: a write that wakes a backend
 * then cannot hand it this thread's core.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { sql } from "kysely";
import { createDb } from "../db/connection";
import { prepareDatabase } from "../db/prepare";
import type { IdentityProviderClient } from "../lib/provider/client";
import { sessionFor } from "../lib/web/session";
import { productSwitch } from "../lib/web/switch";
import { databaseFor } from "../test/harness/databases";
import { acquireWithIntentOn, markUnlinkedOn, saveAndReleaseOn } from "./bare-statements";
import { addBenchUsers } from "./bench-users";
import { serverWarmupWaves } from "./plan";
import { processCpuMs, processTree, threadSchedstat } from "./process-cpu";
import { median } from "./stats";

const users = 64;
const measuredWaves = 20;
const profiledWaves = 10;
const apart = process.argv.includes("--apart");

const databaseUrl = await prepareDatabase(databaseFor("bench-switch-in-process"), { fresh: true });
const { db, pool } = createDb(databaseUrl, 16);
const switchers = await addBenchUsers(db, users);
const sessionOf = new Map<string, string>();
for (const user of switchers) {
  const session = await db
    .insertInto("sessions")
    .values({ user_id: user.id, expires_at: sql<Date>`now() + interval '1 day'` })
    .returning("id")
    .executeTakeFirstOrThrow();
  sessionOf.set(user.id, session.id);
}
const answered = async () => undefined;
const provider = { unlinkIdentity: answered, linkAccount: answered } as unknown as IdentityProviderClient;

// Each user switches to its other identity, one record for both ways: they change the same rows.
const primaryIndex = new Map(switchers.map((user) => [user.id, 0]));
const nextTarget = (user: (typeof switchers)[number]) => {
  const next = 1 - primaryIndex.get(user.id)!;
  primaryIndex.set(user.id, next);
  return user.identities[next]!;
};
type User = (typeof switchers)[number];
const ways: Record<string, (user: User) => Promise<void>> = {
  async bare(user) {
    const identityId = nextTarget(user);
    const holder = await acquireWithIntentOn(pool, user.id, identityId, randomUUID());
    if (!holder) throw new Error(`bare: ${user.id}'s lease was not free`);
    await provider.unlinkIdentity(holder.primary_identity_id, identityId, {} as never);
    await markUnlinkedOn(pool, user.id, holder);
    await provider.linkAccount(identityId, holder.primary_identity_id, {} as never);
    if (!(await saveAndReleaseOn(pool, user.id, holder, identityId))) throw new Error("bare: not saved");
  },
  async "the product's switch"(user) {
    const requires = sessionFor(sessionOf.get(user.id)!, user.id);
    const result = await productSwitch.promote(db, provider, {
      userId: user.id,
      identityId: nextTarget(user),
      requires,
    });
    // A switch to the primary it already has sends 2 statements, not 3: it would be measured cheaper.
    if (!result.changed) throw new Error(`the product's switch: ${user.id}'s primary did not change`);
  },
};

const { rows: dataDirectory } = await sql<{ path: string }>`SELECT current_setting('data_directory') AS path`.execute(
  db,
);
const postmaster = Number(readFileSync(`${dataDirectory[0]!.path}/postmaster.pid`, "utf8").split("\n")[0]);

const mainThread = () => threadSchedstat(process.pid, process.pid);

interface WaveFigures {
  cpuMs: number;
  mainThreadMs: number;
  waitMs: number;
  /** Null in a profiled wave: the scan that finds PostgreSQL's processes would be in the profile. */
  postgresMs: number | null;
}

async function wave(run: (user: User) => Promise<void>, { profiled = false } = {}): Promise<WaveFigures> {
  // PostgreSQL's processes are found by a scan of /proc: outside this process's measured window.
  const postgres = profiled ? null : processCpuMs(postmaster)!;
  const [cpu, main] = [process.cpuUsage(), mainThread()];
  await Promise.all(switchers.map(run));
  const [used, after] = [process.cpuUsage(cpu), mainThread()];
  return {
    cpuMs: (used.user + used.system) / 1000 / users,
    mainThreadMs: (after.cpuMs - main.cpuMs) / users,
    waitMs: (after.waitMs - main.waitMs) / users,
    postgresMs: postgres === null ? null : (processCpuMs(postmaster)! - postgres) / users,
  };
}

/** Each process's cores as taskset lists them ("0,1"), to put back after the run. */
const coresOf = (pid: number) =>
  execFileSync("taskset", ["-p", "-c", String(pid)], { encoding: "utf8" })
    .split(": ")[1]!
    .trim();
/** Pins each process (all its threads) to `cores`. */
const pin = (pids: number[], cores: string) => {
  for (const pid of pids) execFileSync("taskset", ["-a", "-p", "-c", cores, String(pid)], { stdio: "ignore" });
};
// The embedded server's processes: the postmaster and every backend it forks (a fork inherits its cores).
const postgresPids = () => processTree(postmaster);
const coresBefore = { ours: coresOf(process.pid), postgres: coresOf(postmaster) };
if (apart) {
  pin([process.pid], "0");
  pin(postgresPids(), "1");
}

const profiler = new Session();
profiler.connect();
await profiler.post("Profiler.enable");
await profiler.post("Profiler.setSamplingInterval", { interval: 1_000 });

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

/** What a V8 profile of `waves` waves books per switch: all but idle, and on `writev`. */
async function profiled(run: (user: User) => Promise<void>, waves: number) {
  await profiler.post("Profiler.start");
  const figures: WaveFigures[] = [];
  for (let index = 0; index < waves; index++) figures.push(await wave(run, { profiled: true }));
  const { profile } = await profiler.post("Profiler.stop");
  const nodes = new Map((profile.nodes as ProfileNode[]).map((node) => [node.id, node.callFrame]));
  const booked = { all: 0, writev: 0 };
  profile.samples!.forEach((id, index) => {
    const frame = nodes.get(id)!;
    const delta = profile.timeDeltas![index]! / 1000;
    if (frame.functionName === "(idle)") return;
    booked.all += delta;
    if (frame.functionName === "writev" && frame.url === "") booked.writev += delta;
  });
  const switches = waves * users;
  const meanOf = (of: "mainThreadMs" | "waitMs") => figures.reduce((total, each) => total + each[of], 0) / waves;
  return {
    "main thread (ms)": meanOf("mainThreadMs").toFixed(3),
    "run-queue wait (ms)": meanOf("waitMs").toFixed(3),
    "profiled (ms)": (booked.all / switches).toFixed(3),
    "of it writev (ms)": (booked.writev / switches).toFixed(3),
  };
}

try {
  for (let index = 0; index < serverWarmupWaves; index++) for (const run of Object.values(ways)) await wave(run);
  const samples = new Map(Object.keys(ways).map((name) => [name, [] as WaveFigures[]]));
  for (let index = 0; index < measuredWaves; index++) {
    const order = index % 2 ? Object.entries(ways) : Object.entries(ways).reverse();
    for (const [name, run] of order) samples.get(name)!.push(await wave(run));
  }
  const rows: Record<string, Record<string, string>> = {};
  for (const [name, figures] of samples) {
    const medianOf = (of: keyof WaveFigures) => median(figures.map((each) => each[of] ?? 0)).toFixed(3);
    rows[name] = {
      "CPU (ms)": medianOf("cpuMs"),
      "main thread (ms)": medianOf("mainThreadMs"),
      "run-queue wait (ms)": medianOf("waitMs"),
      "PostgreSQL's CPU (ms)": medianOf("postgresMs"),
    };
  }
  console.log(`Per switch, ${users} at once, median of ${measuredWaves} waves${apart ? ", pinned apart" : ""}:`);
  console.table(rows);
  const profiles: Record<string, Record<string, string>> = {};
  for (const [name, run] of Object.entries(ways)) profiles[name] = await profiled(run, profiledWaves);
  console.log(`Under V8's profiler, per switch, over ${profiledWaves} waves:`);
  console.table(profiles);
} finally {
  profiler.disconnect();
  try {
    if (apart) {
      pin([process.pid], coresBefore.ours);
      pin(postgresPids(), coresBefore.postgres);
    }
  } finally {
    await db.destroy();
  }
}
