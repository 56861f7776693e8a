/**
 * The key events of a variant that its lanes show beyond a lease's life: two writers at the provider at
 * once on one account (the collision), the longest wait for a connection or a lock, a provider step or a
 * release that failed, a release that a background retry made, an answer of 5xx. Each is a fact read off
 * the recorded lanes, never off what the experiment expected. Pure.
 */
import type { Lane, Phase } from "../lane";

const ms = (iso: string): number => Date.parse(iso);

/** A fact of a run before it is numbered: when, on which lane, what (`weight` 1 is a key event, 3 a detail). */
export interface Fact {
  at: string;
  lane: Lane;
  what: string;
  /** The fact in a few words, for the picture (`what` when absent). */
  short?: string;
  weight: 1 | 2 | 3;
}

const writes = (lane: Lane): Phase[] =>
  lane.phases.filter(
    (phase) => (phase.name === "unlink" || phase.name === "link") && phase.endedAt && phase.accounts?.length,
  );

/** The first moment two lanes' provider writes overlap on one account: the later one's start. */
export function collisionFact(lanes: Lane[], name: (lane: Lane) => string): Fact | null {
  let first: Fact | null = null;
  for (const a of lanes)
    for (const b of lanes) {
      if (a === b) continue;
      for (const mine of writes(a))
        for (const theirs of writes(b)) {
          const account = mine.accounts!.find((each) => theirs.accounts!.includes(each));
          const from = ms(mine.startedAt);
          const overlaps = from >= ms(theirs.startedAt) && from < ms(theirs.endedAt!);
          if (!account || !overlaps || (first && ms(first.at) <= from)) continue;
          const what = `its ${mine.name} reaches the provider during ${name(b)}'s ${theirs.name}, on ${account}`;
          const short = `its ${mine.name} collides with another's ${theirs.name}`;
          first = { at: mine.startedAt, lane: a, what, short, weight: 1 };
        }
    }
  return first;
}

/**
 * The longest wait (for a pooled connection, a lock, or, before a recovery, an earlier switch's calls to stop being
 * able to land), when it is long enough to see (200 ms).
 */
export function longestWaitFact(lanes: Lane[]): Fact | null {
  const waits = lanes.flatMap((lane) =>
    lane.phases
      .filter((phase) => phase.name === "waiting" && phase.endedAt)
      .map((phase) => ({ lane, phase, took: ms(phase.endedAt!) - ms(phase.startedAt) })),
  );
  const longest = waits.sort((a, b) => b.took - a.took)[0];
  if (!longest || longest.took < 200) return null;
  const what = `waits ${longest.took.toLocaleString("en")} ms ${longest.phase.detail ?? ""}`.trim();
  return { at: longest.phase.endedAt!, lane: longest.lane, what, weight: 2 };
}

/**
 * Per lane: its first provider step answered 5xx, its first failed release, a release made by a retry,
 * and its own 5xx answer (but a 502: the provider refusing a step of a run already corrupted, which its
 * bar shows; and a crash's, which the crash is).
 */
export function failureFacts(lane: Lane): Fact[] {
  const facts: Fact[] = [];
  const failedStep = lane.phases.find(
    (phase) => (phase.name === "unlink" || phase.name === "link") && /^5\d\d$/.test(phase.outcome ?? ""),
  );
  if (failedStep?.endedAt)
    facts.push({
      at: failedStep.endedAt,
      lane,
      what: `its ${failedStep.name} fails (${failedStep.outcome})`,
      weight: 1,
    });
  const release = lane.phases.find((phase) => phase.name === "release" && phase.outcome === "failed");
  if (release?.endedAt) facts.push({ at: release.endedAt, lane, what: "its release fails", weight: 1 });
  const retried = lane.phases.find(
    (phase) => phase.name === "release" && phase.outcome === "released" && phase.detail?.includes("background retry"),
  );
  if (retried?.endedAt)
    facts.push({ at: retried.endedAt, lane, what: "a background retry releases its lease", weight: 1 });
  const crashed = lane.phases.some((phase) => phase.name === "crashed");
  if (lane.status !== null && lane.status >= 500 && lane.status !== 502 && !crashed && lane.answeredAt) {
    const slug = lane.problemType?.split("/").at(-1);
    facts.push({ at: lane.answeredAt, lane, what: `answers ${lane.status}${slug ? ` ${slug}` : ""}`, weight: 3 });
  }
  return facts;
}
