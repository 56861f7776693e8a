/**
 * What `npm run bench:race` measures, from the environment (defaults: the README's table): how many actors,
 * how many trials of each sending mode, the simulated provider's latency under `none`, and the app's pool.
 */
import path from "node:path";
import type { Send } from "@lease-lock-lab/race";

const listOf = (text: string) => text.split(",").map((each) => Number(each.trim()));

export const actorCounts = listOf(process.env.RACE_SPREAD_ACTORS ?? "2,10,30");
export const trials = Number(process.env.RACE_SPREAD_TRIALS ?? 30);
/**
 * 0 ms: the narrowest window the lab has (the app's own work between its read and its save), where how close
 * together the requests arrive decides whether they overlap. At the lab's default 800 ms every mode overlaps.
 */
export const providerLatencyMs = Number(process.env.RACE_SPREAD_LATENCY_MS ?? 0);
/**
 * The app's pool (the lab's `poolSize`, 4 by default): every request reads its session through it before the
 * lab stamps its lane's `requestedAt`, so a burst queues there before its arrival is recorded.
 */
export const poolSize = Number(process.env.RACE_SPREAD_POOL_SIZE ?? 4);
export const sends: Send[] = ["browser", "last-byte"];
export const appPort = Number(process.env.BENCH_APP_PORT ?? 3214);

const root = path.resolve(import.meta.dirname, "../..");
/** One line per trial, written as they end (a failed trial restarts the worker, not the record). */
export const trialsFile = path.join(root, ".lab", "race-spread-trials.jsonl");
export const resultsFile = path.join(root, "bench", "results", "race-spread.json");

export interface Trial {
  actors: number;
  trial: number;
  send: Send;
  sendMs: number | null;
  /** last-byte: the heads the app answered with 100 Continue before the last bytes. */
  acknowledged: number | null;
  arrivalMs: number | null;
  /** Lanes the timeline showed for the race's requests. */
  arrivals: number;
  statuses: number[];
  /** The audit after the race: the provider no longer agrees with the app. */
  corrupt: boolean;
}
