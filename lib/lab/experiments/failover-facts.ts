/**
 * What the failover experiments do to the replicated database and read on its nodes, apart from the app's
 * pool: through the launcher's operator (lib/lab/database-nodes.ts) they stop replication, kill the primary,
 * promote the standby and bring the old primary back; on each node itself they read ada's lease row; and a
 * switch that pauses before a chosen write.
 */
import { setTimeout as pause } from "node:timers/promises";
import { sql, type Kysely } from "kysely";
import pg from "pg";
import type { Database } from "../../../db/schema";
import { config } from "../../core/config";
import { writeAfter, type SwitchStep } from "../../switch/guard";
import { databaseCluster, operate, type DatabaseNode } from "../database-nodes";
import type { LabSettings } from "../settings-schema";
import { labLeaseGuard } from "../strategies";
import { ada, type OwnGuard } from "./lab";

export async function primaryAndStandby(): Promise<{ primary: DatabaseNode; standby: DatabaseNode }> {
  const cluster = await databaseCluster();
  const primary = cluster?.nodes.find((node) => node.role === "primary");
  const standby = cluster?.nodes.find((node) => node.role === "standby");
  if (!primary || !standby) throw new Error(`a primary and a standby are needed: ${JSON.stringify(cluster?.nodes)}`);
  return { primary, standby };
}

/** Ada's lease row as `node` has it (read on the node itself, standby or primary), and its WAL position. */
export async function leaseOn(node: DatabaseNode): Promise<{
  held: boolean;
  token: string | null;
  fence: string;
  generation: string;
  walLsn: string | null;
} | null> {
  const url = new URL(node.url);
  url.pathname = new URL(config.directDatabaseUrl).pathname;
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 2_000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query(`
      SELECT coalesce(identity_action_locked_until > now(), false) AS held, identity_action_lock_token::text AS token,
             identity_action_fence::text AS fence, identity_action_generation::text AS generation,
             (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn() ELSE pg_current_wal_lsn() END)::text AS "walLsn"
        FROM users WHERE id = '${ada.userId}'`);
    return rows[0] ?? null;
  } catch {
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The operations of a failover, through the launcher's operator. */
export const databaseOperations = {
  /** The standby stops receiving WAL (its primary_conninfo emptied): what the primary commits now, it lacks. */
  stopReplication: () => operate("POST", "/replication/pause"),
  /** SIGKILL to every process of the node. */
  kill: (node: string) => operate("POST", `/nodes/${node}/kill`),
  promote: (node: string) => operate("POST", `/nodes/${node}/promote`),
  /** The old primary follows the new one again (rewound): the lab as it was, the two nodes' roles swapped. */
  rejoin: (node: string) => operate("POST", `/nodes/${node}/rejoin`),
  mode: (mode: "sync" | "async") => operate("PUT", "/replication/mode", { mode }),
};

/**
 * Runs `work`, which may change the replication mode, and puts back the mode it found (the one the lab was started
 * with, `--replica async|sync`), however the work ended: read before, since the work's own first step changes it.
 */
export async function keepingReplicationMode<T>(work: () => Promise<T>): Promise<T> {
  const found = (await databaseCluster())?.mode ?? "async";
  try {
    return await work();
  } finally {
    await databaseOperations.mode(found);
  }
}

/** Until the app's pool writes again (after a promotion its connections to the old primary fail, one by one). */
export async function untilWritable(db: Kysely<Database>, limitMs = 20_000): Promise<number> {
  const started = performance.now();
  for (let inRow = 0; inRow < 3 && performance.now() - started < limitMs;) {
    const wrote = await sql`SELECT pg_notify('lab_probe', '')`.execute(db).then(
      () => true,
      () => false,
    );
    inRow = wrote ? inRow + 1 : 0;
    if (!wrote) await pause(50);
  }
  return Math.round(performance.now() - started);
}

/** The timeline the primary writes on now (the generation a lease taken now gets). */
export async function timelineNow(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ timeline: string }>`
    SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint::text AS timeline`.execute(db);
  return rows[0]!.timeline;
}

/**
 * A switch under the lab's lease that stops right before `write`'s call, after its last check (as a GC pause
 * would), until `resume()`; `reached` resolves when it gets there. Nothing checks the lease again after the
 * pause: the call follows it at once.
 */
export function pausedBefore(settings: LabSettings, write: "unlink" | "link", why: string) {
  let reachedIt = () => {};
  let resume = () => {};
  const reached = new Promise<void>((resolve) => (reachedIt = resolve));
  const resumed = new Promise<void>((resolve) => (resume = resolve));
  const own: OwnGuard = {
    strategy: "lease",
    guard: (lane) => {
      const guard = labLeaseGuard(settings, { recorder: lane });
      return {
        checksRequirements: guard.checksRequirements,
        run: (request, body) =>
          guard.run(request, (section) =>
            body({
              ...section,
              async reached(step: SwitchStep, fromIdentityId?: string) {
                await section.reached(step, fromIdentityId); // its checkpoint before the next write
                if (writeAfter[step] !== write) return;
                const ended = lane.start("paused", why);
                reachedIt();
                await resumed;
                ended("resumed");
              },
            }),
          ),
      };
    },
  };
  return { own, reached, resume };
}

/** A fence (as the lanes carry it, text) `by` acquisitions later; an unread one counts from 0. */
export const plus = (fence: string | undefined, by: number): string => String(BigInt(fence ?? "0") + BigInt(by));
