/**
 * The lease library against what the hardware allows, straight on PostgreSQL (no app, no HTTP):
 * - one acquire + release after another on one connection: two bare single-row autocommit UPDATEs (the physical
 *   floor: two durable commits), the library alone (its acquire and release, nothing else written), the library as
 *   the app calls it (identityActionLease with the journal's intent recorder: its acquire also inserts the
 *   switch's journal entry), and that same acquire and release as raw SQL through raw pg, unnamed and named;
 * - N acquirers on one row at once, each on its own connection: one winner per round, and how long the
 *   losers wait for their answer, library against the raw statement, round by round alternately.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import pg from "pg";
import { createDb } from "../db/connection";
import type { Database } from "../db/schema";
import { defaultMaxHoldMs } from "@lease-lock-lab/lease";
import { identityActionLease } from "../lib/switch/users";
import { leaseBoundRecording } from "../lib/switch/journal";
import { distribution, quantiles, repeated, shuffled, type Distribution, type Repeated } from "./stats";

const rowId = "ada";
const targetIdentityId = "github|8812";
const ttlMs = 10_000;
/** The provider's apply limit: the intent's calls may land until this long past the lease's expiry. */
const applyLimitMs = 10_000;
/**
 * As the app acquires: the hold cap withLease passes is 3 × TTL; the intent as the lease guard records it, its
 * calls bounded by the provider's apply limit (10 s) past the lease's expiry.
 */
export const acquireOptions = (operationId: string) => ({
  ttlMs,
  maxHoldMs: defaultMaxHoldMs(ttlMs),
  intent: leaseBoundRecording.statements.intent,
  values: leaseBoundRecording.values({ userId: rowId, operationId, targetIdentityId, applyLimitMs }),
});

/** The library's acquire, written out by hand: the same statement text the library sends. */
export const rawAcquireSql = `
  WITH acquired AS (
    UPDATE users
       SET identity_action_locked_at = now(), identity_action_locked_until = now() + make_interval(secs => $1),
           identity_action_lock_token = gen_random_uuid(), identity_action_fence = identity_action_fence + 1
     WHERE id = $2 AND (identity_action_locked_until IS NULL OR identity_action_locked_until < now())
    RETURNING *, identity_action_fence AS lease_lock_fence, identity_action_locked_until AS lease_lock_until
  ), intent AS (
    INSERT INTO switch_journal (user_id, operation_id, fence, from_identity_id, to_identity_id, step, in_flight_until)
    SELECT id, $3::uuid, lease_lock_fence, primary_identity_id, coalesce($4, primary_identity_id), 'acquired',
           lease_lock_until + make_interval(secs => $6)
      FROM acquired
    RETURNING id
  ), holder AS (
    SELECT identity_action_locked_until AS until FROM users
     WHERE id = $5 AND NOT EXISTS (SELECT 1 FROM acquired) FOR SHARE
  )
  SELECT acquired.*, acquired.identity_action_lock_token::text AS lease_lock_token, holder.until AS lease_lock_held_until,
         greatest(0, extract(epoch FROM (coalesce(acquired.lease_lock_until, holder.until) - clock_timestamp())) * 1000)::float8
           AS lease_lock_remaining_ms,
         EXISTS (SELECT 1 FROM holder) AS lease_lock_held, (SELECT id::text FROM intent LIMIT 1) AS lease_lock_intent_id,
         acquired.id IS NOT NULL AS acquired, acquired.identity_action_lock_token AS token
    FROM (VALUES (1)) AS one (lease_lock_one)
    LEFT JOIN acquired ON true LEFT JOIN holder ON true`;
export const rawReleaseSql = `
  UPDATE users SET identity_action_locked_at = NULL, identity_action_locked_until = NULL, identity_action_lock_token = NULL
   WHERE id = $1 AND identity_action_lock_token = $2`;

/** The raw acquire, unnamed (parsed and planned at each call) or as a named prepared statement. */
const rawAcquire = (client: pg.Pool, name?: string) =>
  client.query<{ acquired: boolean; token: string | null }>({
    name,
    text: rawAcquireSql,
    values: [ttlMs / 1000, rowId, randomUUID(), targetIdentityId, rowId, applyLimitMs / 1000],
  });

export type MicroVariant = "bare-updates" | "library-alone" | "raw-sql" | "raw-sql-prepared" | "library";
export const microVariants: MicroVariant[] = [
  "bare-updates",
  "library-alone",
  "raw-sql",
  "raw-sql-prepared",
  "library",
];

interface Connections {
  pool: pg.Pool;
  db: Kysely<Database>;
}

/** One acquire + release, each way; every way must actually win (the row is free between iterations). */
const cycles: Record<MicroVariant, (connections: Connections) => Promise<void>> = {
  // Two single-row autocommit UPDATEs of the same row: the least two durable commits can cost.
  "bare-updates": async ({ pool }) => {
    await pool.query("UPDATE users SET identity_action_lock_token = gen_random_uuid() WHERE id = $1", [rowId]);
    await pool.query("UPDATE users SET identity_action_lock_token = NULL WHERE id = $1", [rowId]);
  },
  // The library's own acquire + release, as another project would call it: the lease's row and nothing else.
  "library-alone": async ({ db }) => {
    const acquisition = await identityActionLease.acquire(db, rowId, {
      ttlMs,
      maxHoldMs: defaultMaxHoldMs(ttlMs),
    });
    if (!acquisition.acquired) throw new Error("the library's acquire alone did not win a free row");
    await acquisition.lease.release();
  },
  "raw-sql": async ({ pool }) => {
    const taken = await rawAcquire(pool);
    if (!taken.rows[0]?.acquired) throw new Error("raw acquire did not win a free row");
    await pool.query(rawReleaseSql, [rowId, taken.rows[0].token]);
  },
  // The same, as named prepared statements: what the library sends (db/prepared-statements.ts).
  "raw-sql-prepared": async ({ pool }) => {
    const taken = await rawAcquire(pool, "bench_acquire");
    if (!taken.rows[0]?.acquired) throw new Error("raw acquire did not win a free row");
    await pool.query({ name: "bench_release", text: rawReleaseSql, values: [rowId, taken.rows[0].token] });
  },
  library: async ({ db }) => {
    const acquisition = await identityActionLease.acquire(db, rowId, acquireOptions(randomUUID()));
    if (!acquisition.acquired) throw new Error("library acquire did not win a free row");
    await acquisition.lease.release();
  },
};

export interface MicroResult {
  iterations: number;
  repetitions: number;
  /** Per variant: the milliseconds of one acquire + release, per repetition and pooled. */
  variants: Record<MicroVariant, { p50: Repeated; p99: Repeated; pooled: Distribution; shape: number[] }>;
  /** Ratios of the medians over repetitions, each repetition's ratio taken side by side. */
  ratios: {
    libraryToRawP50: Repeated;
    libraryToRawP99: Repeated;
    libraryToRawPreparedP50: Repeated;
    libraryToRawPreparedP99: Repeated;
    libraryToBareP50: Repeated;
    libraryToBareP99: Repeated;
    libraryAloneToBareP50: Repeated;
    libraryAloneToBareP99: Repeated;
    rawToBareP50: Repeated;
  };
}

/** Iterations run back to back before the next way's turn: small blocks, so all ways share the machine's moods. */
const blockSize = 50;

/**
 * Times each of `ways` (one operation each) against the others: per repetition, a warm-up of each, then
 * `iterations` of each in blocks of 50, the ways' order shuffled for every block. Each way's milliseconds,
 * one list per repetition.
 */
export async function timedInBlocks<Way extends string>(
  ways: Record<Way, () => Promise<void>>,
  options: { iterations: number; warmup: number; repetitions: number; random: () => number },
  progress: (note: string) => void,
): Promise<Record<Way, number[][]>> {
  const names = Object.keys(ways) as Way[];
  const runs = Object.fromEntries(names.map((way) => [way, [] as number[][]])) as Record<Way, number[][]>;
  for (let repetition = 0; repetition < options.repetitions; repetition++) {
    progress(`repetition ${repetition + 1}/${options.repetitions}`);
    for (const way of shuffled(names, options.random)) for (let i = 0; i < options.warmup; i++) await ways[way]();
    const times = Object.fromEntries(names.map((way) => [way, [] as number[]])) as Record<Way, number[]>;
    for (let block = 0; block < options.iterations / blockSize; block++)
      for (const way of shuffled(names, options.random))
        for (let i = 0; i < blockSize; i++) {
          const started = performance.now();
          await ways[way]();
          times[way].push(performance.now() - started);
        }
    for (const way of names) runs[way].push(times[way]);
  }
  return runs;
}

export async function leaseMicrobench(
  databaseUrl: string,
  options: { iterations: number; warmup: number; repetitions: number; random: () => number },
  progress: (note: string) => void,
): Promise<MicroResult> {
  // Each way on a pool of one connection of its own, as the app's library calls and raw pg would run.
  const { db, pool } = createDb(databaseUrl, 1);
  const rawPool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const connections = (variant: MicroVariant): Connections => ({
    pool: variant.startsWith("library") ? pool : rawPool,
    db,
  });
  let samples: Record<MicroVariant, number[][]>;
  try {
    samples = await timedInBlocks(
      Object.fromEntries(
        microVariants.map((variant) => [variant, () => cycles[variant](connections(variant))]),
      ) as Record<MicroVariant, () => Promise<void>>,
      options,
      (note) => progress(`lease microbenchmark: ${note}`),
    );
  } finally {
    await db.destroy();
    await rawPool.end();
  }
  const perRun = (variant: MicroVariant, p: "p50" | "p99") =>
    samples[variant].map((times) => distribution(times)[p] ?? NaN);
  const ratio = (top: MicroVariant, bottom: MicroVariant, p: "p50" | "p99") =>
    repeated(perRun(top, p).map((value, index) => value / perRun(bottom, p)[index]!));
  return {
    iterations: options.iterations,
    repetitions: options.repetitions,
    variants: Object.fromEntries(
      microVariants.map((variant) => [
        variant,
        {
          p50: repeated(perRun(variant, "p50")),
          p99: repeated(perRun(variant, "p99")),
          pooled: distribution(samples[variant].flat()),
          shape: quantiles(samples[variant].flat()),
        },
      ]),
    ) as MicroResult["variants"],
    ratios: {
      libraryToRawP50: ratio("library", "raw-sql", "p50"),
      libraryToRawP99: ratio("library", "raw-sql", "p99"),
      libraryToRawPreparedP50: ratio("library", "raw-sql-prepared", "p50"),
      libraryToRawPreparedP99: ratio("library", "raw-sql-prepared", "p99"),
      libraryToBareP50: ratio("library", "bare-updates", "p50"),
      libraryToBareP99: ratio("library", "bare-updates", "p99"),
      libraryAloneToBareP50: ratio("library-alone", "bare-updates", "p50"),
      libraryAloneToBareP99: ratio("library-alone", "bare-updates", "p99"),
      rawToBareP50: ratio("raw-sql", "bare-updates", "p50"),
    },
  };
}

export interface ContentionResult {
  acquirers: number;
  rounds: number;
  /** Rounds (over both ways) that did not have exactly one winner: must be 0. */
  roundsWithoutOneWinner: number;
  library: { p50: Repeated; p99: Repeated };
  raw: { p50: Repeated; p99: Repeated };
  libraryToRawP99: Repeated;
}

/**
 * `acquirers` at once on one row, each on its own connection (the pools are opened to that size first).
 * Each round's answer times are from the moment all were sent to each one's answer.
 */
export async function contentionBench(
  databaseUrl: string,
  options: { acquirers: number; samples: number; repetitions: number },
  progress: (note: string) => void,
): Promise<ContentionResult> {
  const { acquirers, repetitions } = options;
  const rounds = Math.ceil(options.samples / acquirers);
  // One pool of N connections serves both ways (the server's 100 connections are shared with others).
  const { db, pool } = createDb(databaseUrl, acquirers);
  let roundsWithoutOneWinner = 0;
  const times = { library: [] as number[][], raw: [] as number[][] };
  try {
    await Promise.all(Array.from({ length: acquirers }, () => pool.query("SELECT pg_sleep(0.05)")));
    const libraryRound = async (): Promise<number[]> => {
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: acquirers }, async () => {
          const acquisition = await identityActionLease.acquire(db, rowId, acquireOptions(randomUUID()));
          return { acquisition, ms: performance.now() - started };
        }),
      );
      const winners = answers.filter((answer) => answer.acquisition.acquired);
      if (winners.length !== 1) roundsWithoutOneWinner++;
      for (const winner of winners) if (winner.acquisition.acquired) await winner.acquisition.lease.release();
      return answers.map((answer) => answer.ms);
    };
    const rawRound = async (): Promise<number[]> => {
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: acquirers }, async () => {
          const { rows } = await rawAcquire(pool);
          return { row: rows[0]!, ms: performance.now() - started };
        }),
      );
      const winners = answers.filter((answer) => answer.row.acquired);
      if (winners.length !== 1) roundsWithoutOneWinner++;
      for (const winner of winners) await pool.query(rawReleaseSql, [rowId, winner.row.token]);
      return answers.map((answer) => answer.ms);
    };
    for (let repetition = 0; repetition < repetitions; repetition++) {
      progress(`contention: ${acquirers} acquirers, repetition ${repetition + 1}/${repetitions}`);
      // Warm-up rounds, then the two ways alternately, round by round, so both see the same machine.
      for (let i = 0; i < 3; i++) {
        await libraryRound();
        await rawRound();
      }
      const library: number[] = [];
      const raw: number[] = [];
      for (let round = 0; round < rounds; round++) {
        if (round % 2 === 0) {
          library.push(...(await libraryRound()));
          raw.push(...(await rawRound()));
        } else {
          raw.push(...(await rawRound()));
          library.push(...(await libraryRound()));
        }
      }
      times.library.push(library);
      times.raw.push(raw);
    }
  } finally {
    await db.destroy();
  }
  const summary = (runs: number[][]) => ({
    p50: repeated(runs.map((run) => distribution(run).p50)),
    p99: repeated(runs.map((run) => distribution(run).p99!)),
  });
  return {
    acquirers,
    rounds,
    roundsWithoutOneWinner,
    library: summary(times.library),
    raw: summary(times.raw),
    libraryToRawP99: repeated(
      times.library.map((run, index) => distribution(run).p99! / distribution(times.raw[index]!).p99!),
    ),
  };
}
