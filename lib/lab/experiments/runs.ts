/**
 * Saved runs: what an experiment run recorded (its lanes, its history of operations, the moments it
 * read the provider and the lease, its numbered facts), stored so that it can be reopened, replayed,
 * exported and imported again. The export is the record itself: one shape in and out.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { z } from "zod";
import type { Database } from "../../../db/schema";
import { Problem } from "../../core/problems";
import { nestedAtMost, parseOrThrow } from "../../core/validation";
import type { Lane } from "../lane";
import type { CaptionInput } from "./captions";
import { experiments } from "./registry";

/** One operation's invocation or completion, in Jepsen's form (`info`: the outcome is unknown). */
export interface HistoryOp {
  process: number;
  type: "invoke" | "ok" | "fail" | "info";
  /** `acquire`: a bare acquisition of the lease, no switch (the races of Q2 and F4). */
  f: "switch" | "rename" | "support-switch" | "acquire";
  value: Record<string, unknown>;
  at: string;
  /** Beyond Jepsen's fields: which request it was, in the run's words. */
  operationId: string;
  label: string;
}

/** A stretch of the run that started from the seed with its own settings (each `lab.fresh()`). */
export interface RunVariant {
  /** Its caption, distinct within the run: what sets it apart from the run's other variants. */
  label: string;
  startedAt: string;
  endedAt: string;
  operationIds: string[];
  /** What the caption was read from (absent in runs saved before captions were). */
  captionFrom?: CaptionInput;
}

/** What the run read at one moment: the provider's accounts, the local primary, the lease row, the audit. */
export interface RunSnapshot {
  at: string;
  accounts: { user_id: string; identities: { provider: string; user_id: string }[] }[];
  localPrimaryIdentityId: string | null;
  lease: { held: boolean; expiresAt: string | null; fence: string; generation?: string | null } | null;
  /** Read only where the run paused to ask (the end of each variant); null elsewhere. */
  audit: { consistent: boolean; violations: string[] } | null;
}

/** A numbered fact drawn on the picture and cited by the steps. */
export interface RunMarker {
  n: number;
  at: string;
  operationId: string;
  text: string;
  /** The fact alone, in one short line, drawn beside its marker (absent in runs saved before it was). */
  caption?: string;
}

export interface RunRecord {
  id: string;
  experimentId: string;
  startedAt: string;
  endedAt: string;
  verdict: "as-expected" | "unexpected";
  explanation: string;
  /** The numbered facts, in time order, each worded with its time from its operation's start. */
  steps: RunMarker[];
  variants: RunVariant[];
  lanes: Lane[];
  history: HistoryOp[];
  snapshots: RunSnapshot[];
  observed: Record<string, unknown>;
  imported: boolean;
}

const iso = z.iso.datetime({ offset: true });
const phaseSchema = z.object({
  name: z.enum(["waiting", "acquire", "recover", "unlink", "link", "save", "renew", "release", "paused", "crashed"]),
  startedAt: iso,
  endedAt: iso.nullable(),
  outcome: z.string().max(200).nullable(),
  detail: z.string().max(2_000).nullable(),
  accounts: z.array(z.string().max(200)).max(10).optional(),
  attempts: z.number().int().min(1).max(100).optional(),
});
const laneSchema = z.object({
  operationId: z.uuid(),
  userId: z.string().min(1).max(200),
  instance: z.string().max(200),
  strategy: z.string().max(80),
  toIdentityId: z.string().max(200).nullable(),
  requestedAt: iso,
  answeredAt: iso.nullable(),
  status: z.number().int().min(0).max(999).nullable(),
  problemType: z.string().max(300).nullable(),
  phases: z.array(phaseSchema).max(200),
  lease: z
    .object({
      acquiredAt: iso,
      expiresAt: iso,
      releasedAt: iso.nullable(),
      fence: z.string().max(30),
      generation: z.string().max(30).optional(),
    })
    .nullable(),
});
const accountSchema = z.object({
  user_id: z.string().max(200),
  identities: z.array(z.object({ provider: z.string().max(100), user_id: z.string().max(200) }).loose()).max(50),
});

/** An exported run as a file brings it: everything checked, nothing unknown kept. */
const runFileSchema = z.strictObject({
  id: z.uuid().optional(),
  experimentId: z.string().regex(/^[a-z0-9-]{1,80}$/, "must be an experiment's id"),
  startedAt: iso,
  endedAt: iso,
  verdict: z.enum(["as-expected", "unexpected"]),
  explanation: z.string().max(20_000),
  steps: z
    .array(
      z.strictObject({
        n: z.number().int().min(1),
        at: iso,
        operationId: z.uuid(),
        text: z.string().max(500),
        caption: z.string().max(200).optional(),
      }),
    )
    .max(100),
  variants: z
    .array(
      z.strictObject({
        label: z.string().max(200),
        startedAt: iso,
        endedAt: iso,
        operationIds: z.array(z.uuid()).max(500),
        captionFrom: z
          .strictObject({
            strategy: z.string().max(80),
            differences: z.record(
              z.string().max(200),
              z.union([z.string().max(500), z.number(), z.boolean(), z.null()]),
            ),
            note: z.string().max(200).nullable(),
          })
          .optional(),
      }),
    )
    .max(20),
  lanes: z.array(laneSchema).max(500),
  history: z
    .array(
      z.strictObject({
        process: z.number().int().min(0),
        type: z.enum(["invoke", "ok", "fail", "info"]),
        f: z.enum(["switch", "rename", "support-switch", "acquire"]),
        value: z.record(z.string(), z.unknown()),
        at: iso,
        operationId: z.uuid(),
        label: z.string().max(200),
      }),
    )
    .max(1_000),
  snapshots: z
    .array(
      z.strictObject({
        at: iso,
        accounts: z.array(accountSchema).max(100),
        localPrimaryIdentityId: z.string().max(200).nullable(),
        lease: z
          .strictObject({
            held: z.boolean(),
            expiresAt: iso.nullable(),
            fence: z.string().max(30),
            generation: z.string().max(30).nullable().optional(),
          })
          .nullable(),
        audit: z.strictObject({ consistent: z.boolean(), violations: z.array(z.string().max(500)).max(50) }).nullable(),
      }),
    )
    .max(1_000),
  observed: z.record(z.string(), z.unknown()),
  imported: z.boolean().optional(),
});

/** What the fields say together: a run of an experiment this lab has, that ended after it began, its variants named apart. */
const consistentRunFileSchema = runFileSchema.superRefine((run, context) => {
  if (!experiments.some((experiment) => experiment.id === run.experimentId))
    context.addIssue({ code: "custom", path: ["experimentId"], message: "must be one of this lab's experiments" });
  if (Date.parse(run.endedAt) < Date.parse(run.startedAt))
    context.addIssue({ code: "custom", path: ["endedAt"], message: "must not be before startedAt" });
  run.variants.forEach((variant, index) => {
    if (run.variants.findIndex((other) => other.label === variant.label) < index)
      context.addIssue({
        code: "custom",
        path: ["variants", index, "label"],
        message: "must differ from every other variant's label",
      });
  });
});

/**
 * The file, its depth bounded before anything reads it: its open parts (`observed`, a history entry's `value`,
 * an identity's own fields) could nest without end, and a run nests about 7 deep.
 */
export const importedRunSchema = nestedAtMost(64).pipe(consistentRunFileSchema);

export class RunNotFound extends Problem {
  constructor(runId: string) {
    super(404, "run-not-found", "No such run", `There is no saved run "${runId}".`);
  }
}

export const runIdSchema = z.uuid("must be a run's id (a UUID)");

export async function saveRun(db: Kysely<Database>, run: RunRecord): Promise<void> {
  await db
    .insertInto("experiment_runs")
    .values({
      id: run.id,
      experiment_id: run.experimentId,
      started_at: new Date(run.startedAt),
      ended_at: new Date(run.endedAt),
      imported: run.imported,
      record: JSON.stringify(run),
    })
    .execute();
}

export async function readRun(db: Kysely<Database>, runId: string): Promise<RunRecord> {
  const row = await db.selectFrom("experiment_runs").select("record").where("id", "=", runId).executeTakeFirst();
  if (!row) throw new RunNotFound(runId);
  return row.record as RunRecord;
}

/** Whether `runId` names a saved run: false for one that is not a run's id. */
export async function runIsSaved(db: Kysely<Database>, runId: string): Promise<boolean> {
  if (!runIdSchema.safeParse(runId).success) return false;
  return (await db.selectFrom("experiment_runs").select("id").where("id", "=", runId).executeTakeFirst()) !== undefined;
}

/** Stores an exported run again, under a new id (the file may be imported twice, or into the lab it came from). */
export async function importRun(db: Kysely<Database>, body: unknown): Promise<RunRecord> {
  const parsed = parseOrThrow(importedRunSchema, body, "body");
  const run: RunRecord = { ...parsed, id: randomUUID(), imported: true } as RunRecord;
  await saveRun(db, run);
  return run;
}
