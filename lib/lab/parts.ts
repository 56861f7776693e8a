/**
 * The production parts an experiment may need, and whether this instance runs with them: they are
 * started by the launcher when asked for (`--pgbouncer`, `--redis`), never by the app.
 */
import { config } from "../core/config";
import { Problem } from "../core/problems";
import { redisAnswers } from "./redis-lock";

export type Part = "pgbouncer" | "redis-server";

/** How to start the app with `part`, for the page and the problem that refuses a run without it. */
export const partFlags: Record<Part, string> = {
  pgbouncer: "--pgbouncer",
  "redis-server": "--redis",
};

/** The command that starts the lab with `parts`. */
export const startCommand = (parts: readonly Part[]): string =>
  `npm run dev -- ${parts.map((part) => partFlags[part]).join(" ")}`;

/** The parts this instance runs with now. */
export async function partsRunning(): Promise<Set<Part>> {
  const running = new Set<Part>();
  // The app's pool goes through a transaction pooler: the launcher's PgBouncer (or a managed one).
  if (config.transactionPooler) running.add("pgbouncer");
  // The redis-server the launcher started (REDIS_URL), answering now: a restart in progress is not running.
  if (await redisAnswers()) running.add("redis-server");
  return running;
}

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
