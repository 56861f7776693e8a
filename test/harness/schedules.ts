/**
 * The model checker's world: schedules of concurrent switches across app instances, drawn by fast-check,
 * with a provider that answers late, hangs, loses answers and fails, TTL changes in the middle, releases
 * that fail, renewals that answer late (a slow database), renames (the row's other writer) and pauses,
 * among them one right before the save, after the last check, longer than renewals may hold the lease.
 * After the schedule, everything must settle: every answer is one the contract allows, no lease stays
 * held past its bound, and once reconciled the audit is consistent.
 */
import { problemSlug } from "../../lib/core/problems";
import fc from "fast-check";
import type { AppClient } from "./http-client";

const users = {
  ada: ["google-oauth2|104423", "github|8812", "auth0|ada-email", "apple|001122.ada"],
  grace: ["github|1906", "google-oauth2|77", "auth0|grace-email"],
  alan: ["auth0|alan-email", "apple|000912.alan"],
  katherine: ["apple|1918.kj", "google-oauth2|2020", "github|3030"],
} as const;
type UserId = keyof typeof users;
const userIds = Object.keys(users) as UserId[];

export interface Click {
  instance: number;
  userId: UserId;
  identityId: string;
  atMs: number;
}

/** A rename of the user (`PATCH /api/users/{userId}`): it takes no lease and writes the user row. */
export interface Rename {
  instance: number;
  userId: UserId;
  atMs: number;
}

export interface Schedule {
  settings: {
    leaseTtlMs: number;
    provider: Record<string, unknown>;
    faults: {
      releaseFailures: number;
      stall: { at: "acquired" | "unlinked" | "linked" | "save"; ms: number } | null;
      slowRenewalMs: number;
      unfencedSave?: boolean;
    };
  };
  clicks: Click[];
  renames: Rename[];
  /** A TTL change while the clicks run (it must not shorten a live lease). */
  ttlChange: { atMs: number; leaseTtlMs: number } | null;
}

/** No call hangs: a timed-out call keeps its operation waiting for its whole deadline. */
const quickChaos = fc.record({
  appliedLateRate: fc.constantFrom(0, 0, 0.2),
  timeoutRate: fc.constant(0),
  networkErrorRate: fc.constantFrom(0, 0, 0.1),
  failureRate: fc.constantFrom(0, 0, 0.2),
});

const chaos = fc.record({
  appliedLateRate: fc.constantFrom(0, 0, 0.1, 0.3),
  timeoutRate: fc.constantFrom(0, 0, 0.1),
  networkErrorRate: fc.constantFrom(0, 0, 0.1),
  failureRate: fc.constantFrom(0, 0, 0.1, 0.2),
});

/**
 * `rich`: every fault the lab has (pauses, TTL changes, releases that always fail, hanging calls, slow
 * renewals), a few seconds each. `quick`: the faults that settle in under a second (late-applied and
 * failed calls, network errors, a failing first release), so that many more schedules fit in the same
 * time. Both have renames among the clicks.
 */
export type ScheduleProfile = "rich" | "quick";

export function scheduleArbitrary(
  instances: number,
  maxClicks = 10,
  profile: ScheduleProfile = "rich",
): fc.Arbitrary<Schedule> {
  const rich = profile === "rich";
  const click = fc
    .record({
      instance: fc.nat(instances - 1),
      userId: fc.constantFrom(...userIds),
      atMs: fc.nat(rich ? 400 : 200),
      pick: fc.nat(3),
    })
    .map(({ instance, userId, atMs, pick }) => ({
      instance,
      userId,
      atMs,
      identityId: users[userId][pick % users[userId].length]!,
    }));
  const rename = fc.record({
    instance: fc.nat(instances - 1),
    userId: fc.constantFrom(...userIds),
    atMs: fc.nat(rich ? 400 : 200),
  });
  const noStall = fc.constant(null);
  return fc.record({
    settings: fc.record({
      leaseTtlMs: rich ? fc.constantFrom(600, 1_000, 1_500) : fc.constant(1_000),
      provider: fc.record({
        latencyMs: fc.nat(rich ? 80 : 30),
        jitterMs: fc.nat(rich ? 40 : 10),
        applyLimitMs: rich ? fc.constantFrom(300, 600, 900) : fc.constant(300),
        enforceFencing: fc.boolean(),
        endpoints: fc.record({ unlink: rich ? chaos : quickChaos, link: rich ? chaos : quickChaos }),
      }),
      faults: fc.record({
        releaseFailures: rich ? fc.constantFrom(0, 0, 0, 1, 10) : fc.constantFrom(0, 0, 1),
        stall: rich
          ? fc.option(
              fc.oneof(
                fc.record({
                  at: fc.constantFrom("acquired", "unlinked", "linked"),
                  ms: fc.constantFrom(300, 1_200, 2_000),
                }),
                // After the last check, right before the save, past every hold cap drawn (3 × 1.5 s).
                fc.record({ at: fc.constant("save"), ms: fc.constant(5_000) }),
              ),
              { freq: 4 },
            )
          : noStall,
        slowRenewalMs: rich ? fc.constantFrom(0, 0, 150) : fc.constant(0),
      }),
    }),
    clicks: fc.array(click, { minLength: 2, maxLength: maxClicks, size: maxClicks > 10 ? "large" : "small" }),
    renames: fc.array(rename, { maxLength: 2 }),
    ttlChange: rich
      ? fc.option(fc.record({ atMs: fc.nat(400), leaseTtlMs: fc.constantFrom(500, 3_000) }), { freq: 3 })
      : fc.constant(null),
  });
}

export interface Outcome {
  status: number;
  type: string | null;
  /** A rename's answer, not a switch's. */
  rename?: true;
}

/**
 * Schedules for the control that removes the save's condition: one user, the first switch paused right
 * before its save past its hold cap (TTL 1 s: cap 3 s), and clicks spread over the pause, so that another
 * switch takes the expired lease over and finishes before the paused one sends its save.
 */
export function unfencedSaveArbitrary(instances: number): fc.Arbitrary<Schedule> {
  const click = fc.record({
    instance: fc.nat(instances - 1),
    atMs: fc.integer({ min: 3_100, max: 3_900 }),
    pick: fc.nat(3),
  });
  return fc.record({
    settings: fc.constant({
      leaseTtlMs: 1_000,
      provider: { latencyMs: 30, jitterMs: 0, applyLimitMs: 300, enforceFencing: false },
      faults: { releaseFailures: 0, stall: { at: "save" as const, ms: 4_000 }, slowRenewalMs: 0, unfencedSave: true },
    }),
    clicks: fc.array(click, { minLength: 1, maxLength: 3 }).map((later) => [
      { instance: 0, userId: "ada" as const, atMs: 0, identityId: users.ada[1] },
      ...later.map(({ instance, atMs, pick }) => ({
        instance,
        userId: "ada" as const,
        atMs,
        identityId: users.ada[2 + (pick % 2)]!,
      })),
    ]),
    renames: fc.constant([]),
    ttlChange: fc.constant(null),
  });
}

/**
 * The answers the contract allows a switch under `lease`, by status and problem type. 503
 * `database-unavailable` (with `Retry-After`) is a switch whose renewal took a whole renewal interval when its
 * deadline came (lib/lease/deadline.ts's `unrenewed`): a stalling database, slowed on purpose (`slowRenewalMs`)
 * or not — on a busy 2-core machine a 600 ms TTL's 200 ms interval was reached with no pause injected (seed 1815,
 * the integration tier beside it). Stopping there is the safe answer; the audit and the leases are still checked.
 */
const allowed: Record<number, (string | null)[]> = {
  200: [null],
  409: ["operation-in-progress", "lease-lost", "fenced"],
  502: ["provider-failed", "recovery-failed"],
  503: ["database-unavailable"],
  504: ["provider-deadline"],
};

/** A rename takes no lease: it succeeds, or its one provider call fails (e.g. its account moved meanwhile). */
const allowedForRename: Record<number, (string | null)[]> = {
  200: [null],
  502: ["provider-failed"],
  504: ["provider-deadline"],
};

export const isAllowed = ({ status, type, rename }: Outcome): boolean =>
  (rename ? allowedForRename : allowed)[status]?.includes(type) ?? false;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Plays one schedule against the app instances (signed-in clients per instance and user). */
export async function playSchedule(
  lab: AppClient,
  sessions: Record<UserId, AppClient>[],
  schedule: Schedule,
  strategy: string,
): Promise<Outcome[]> {
  await lab.configure({ strategy, reconcileAfterMs: 200, ...schedule.settings });
  const started = Date.now();
  const until = (atMs: number) => pause(Math.max(0, atMs - (Date.now() - started)));
  const ttlChange = schedule.ttlChange
    ? until(schedule.ttlChange.atMs).then(() => lab.configure({ leaseTtlMs: schedule.ttlChange!.leaseTtlMs }))
    : Promise.resolve();
  const outcomeOf = (answer: { status: number; body: { type?: unknown } | null }) => ({
    status: answer.status,
    type: typeof answer.body?.type === "string" ? problemSlug(answer.body.type) : null,
  });
  const switches = schedule.clicks.map(async (click) => {
    await until(click.atMs);
    return outcomeOf(await sessions[click.instance]![click.userId].promote(click.userId, click.identityId));
  });
  const renames = schedule.renames.map(async (rename, index) => {
    await until(rename.atMs);
    const body = { displayName: `${rename.userId} (renamed ${index + 1})` };
    const answer = await sessions[rename.instance]![rename.userId].call("PATCH", `/api/users/${rename.userId}`, body);
    return { ...outcomeOf(answer), rename: true as const };
  });
  const answers = await Promise.all([...switches, ...renames]);
  await ttlChange;
  return answers;
}

const calmEndpoint = { appliedLateRate: null, timeoutRate: null, networkErrorRate: null, failureRate: null };

/**
 * After the schedule: the provider calms down (quiescence), every lease is freed within its bound (the
 * longest hold plus the provider's limit, and the longest pause), then the reconcilers settle every
 * half-done switch: the audit says it has settled (no journal entry open, no call that may still land), and
 * the first audit that says so is consistent: a settled audit is a verdict.
 */
export async function settles(
  lab: AppClient,
  sessions: Record<UserId, AppClient>,
  boundMs: number,
): Promise<{ leasesFree: boolean; settled: boolean; consistent: boolean }> {
  const calm = { unlink: calmEndpoint, link: calmEndpoint };
  await lab.configure({
    faults: { stall: null, releaseFailures: 0, slowRenewalMs: 0 },
    provider: { endpoints: calm },
  });
  const leasesFree = await eventually(
    async () => (await Promise.all(userIds.map((userId) => sessions[userId].leaseHeld(userId)))).every((held) => !held),
    boundMs,
  );
  // The background reconcilers settle it within seconds; a round asked for now needs no wait for their tick.
  let verdict: { consistent: boolean } | undefined;
  await eventually(async () => {
    await lab.post("/api/lab/reconcile");
    const audit = await lab.audit();
    if (audit.settled === true) verdict = audit;
    return verdict !== undefined;
  }, 8_000);
  return { leasesFree, settled: verdict !== undefined, consistent: verdict?.consistent === true };
}

async function eventually(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await pause(100);
  }
}

/** How long any lease of this schedule may stay held after its clicks: the bound the checker allows. */
export function leaseBoundMs(schedule: Schedule): number {
  const longestTtl = Math.max(schedule.settings.leaseTtlMs, schedule.ttlChange?.leaseTtlMs ?? 0);
  const applyLimitMs = schedule.settings.provider.applyLimitMs as number;
  return 3 * longestTtl + applyLimitMs + (schedule.settings.faults.stall?.ms ?? 0) + 2_000;
}

export const demoUsers = userIds;

export type Sessions = Record<UserId, AppClient>[];

export interface Checked {
  outcomes: Outcome[];
  unexpected: Outcome[];
  leasesFree: boolean;
  consistent: boolean;
  violations: string[];
}

/** One schedule from a fresh lab, then quiescence: what the checker asserts for every schedule it draws. */
export async function checkSchedule(
  lab: AppClient,
  instances: AppClient[],
  schedule: Schedule,
  strategy: string,
): Promise<Checked> {
  await lab.reset();
  const sessions = await Promise.all(
    instances.map(async (instance) => {
      const clients = await Promise.all(userIds.map((userId) => instance.signedIn(userId)));
      return Object.fromEntries(userIds.map((userId, index) => [userId, clients[index]!])) as Record<UserId, AppClient>;
    }),
  );
  const outcomes = await playSchedule(lab, sessions, schedule, strategy);
  const { leasesFree, settled, consistent } = await settles(lab, sessions[0]!, leaseBoundMs(schedule));
  const violations = consistent
    ? []
    : [
        ...(settled ? [] : ["the audit never said it had settled"]),
        ...(await lab.audit()).users.flatMap((user: { violations: string[] }) => user.violations),
      ];
  return {
    outcomes,
    unexpected: outcomes.filter((outcome) => !isAllowed(outcome)),
    leasesFree,
    consistent,
    violations,
  };
}

export const holds = (checked: Checked): boolean =>
  checked.unexpected.length === 0 && checked.leasesFree && checked.consistent;
