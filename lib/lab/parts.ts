/**
 * The production parts an experiment may need, named by their Debian packages, and whether this instance
 * runs with them: they are started by the launcher when asked for (`--pgbouncer`, `--redis`, `--replica`,
 * `--ha`), never by the app.
 */
import { config } from "../core/config";
import { Problem } from "../core/problems";
import { databaseCluster, type DatabaseCluster } from "./database-nodes";
import { redisAnswers } from "./redis-lock";

export type Part = "pgbouncer" | "redis-server" | "postgresql-15" | "patroni" | "etcd-server";

/** How to start the app with `part`, for the page and the problem that refuses a run without it. */
export const partFlags: Record<Part, string> = {
  pgbouncer: "--pgbouncer",
  "redis-server": "--redis",
  "postgresql-15": "--replica async",
  patroni: "--ha",
  "etcd-server": "--ha",
};

/** The command that starts the lab with `parts` (a flag two parts share, once). */
export const startCommand = (parts: readonly Part[]): string =>
  `npm run dev -- ${[...new Set(parts.map((part) => partFlags[part]))].join(" ")}`;

/** The parts each shape of replicated database runs on. */
const clusterParts: Record<DatabaseCluster["shape"], Part[]> = {
  replica: ["postgresql-15"],
  ha: ["patroni", "etcd-server"],
};

/**
 * The parts this instance runs with now, and those it is told of (REDIS_URL, a database operator) that do not
 * answer now: a restart in progress, a client still connecting. Those may yet.
 */
export async function partsNow(): Promise<{ running: Set<Part>; awaited: Set<Part> }> {
  const running = new Set<Part>();
  const awaited = new Set<Part>();
  // The app's pool goes through a transaction pooler: the launcher's PgBouncer (or a managed one).
  if (config.transactionPooler) running.add("pgbouncer");
  // The redis-server the launcher started (REDIS_URL), answering now: a restart in progress is not running.
  if (await redisAnswers()) running.add("redis-server");
  else if (config.redisUrl) awaited.add("redis-server");
  // A replicated database, as its operator tells it: PostgreSQL 15 nodes with a standby, or Patroni's.
  const cluster = await databaseCluster();
  if (cluster) for (const part of clusterParts[cluster.shape]) running.add(part);
  else if (config.databaseOperatorUrl) for (const part of Object.values(clusterParts).flat()) awaited.add(part);
  return { running, awaited };
}

/** The parts this instance runs with now. */
export const partsRunning = async (): Promise<Set<Part>> => (await partsNow()).running;

/** The parts of `needs` that are not running. */
export async function missingParts(needs: readonly Part[]): Promise<Part[]> {
  const running = await partsRunning();
  return needs.filter((part) => !running.has(part));
}

/** An experiment asked to run on parts this instance does not run with: a 409 naming them and how to start them. */
export class PartsNotRunning extends Problem {
  constructor(experimentId: string, missing: Part[]) {
    super(
      409,
      "part-not-running",
      "A part this experiment needs is not running",
      `${experimentId} needs ${missing.join(" and ")}, which this app instance does not run with: ` +
        `start the lab with ${startCommand(missing)}.`,
      { needs: missing },
    );
  }
}
