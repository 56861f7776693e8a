/**
 * The lab's faults in the app's own code, handed to the lease as hooks: a one-shot pause, a one-shot crash,
 * failing releases, slow renewals, and the save without its lease condition.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { setTimeout as pause } from "node:timers/promises";
import { WorkCrashed } from "../lease/testing";
import type { SwitchFaultHooks } from "../switch/lease-guard";
import type { CrashPoint, LabSettings, StallPoint } from "./settings-schema";
import { takeCrash, takeStall } from "./settings-store";
import type { PhaseRecorder } from "./lane-recorder";

/** A pause "after reaching X" happens at the checkpoint before the step that follows X (`save`: none). */
const checkpointAfter: Record<StallPoint, string | null> = {
  acquired: "unlink",
  unlinked: "link",
  linked: "save",
  saved: "release",
  save: null,
};

/**
 * A crash "after X" happens at the checkpoint before the step that follows X; one during a call is played
 * by the provider's client (crash-during-call.ts), and no checkpoint takes it.
 */
const crashCheckpoint: Record<Exclude<CrashPoint, "during-link">, string> = {
  "after-acquire": "unlink",
  "after-unlink": "link",
  "after-link": "save",
};

export function labFaultHooks(db: Kysely<Database>, settings: LabSettings, recorder?: PhaseRecorder): SwitchFaultHooks {
  let stall: Promise<{ at: StallPoint; ms: number } | null> | undefined;
  let crash: Promise<CrashPoint | null> | undefined;
  // One-shot: the first operation to reach a checkpoint takes the armed pause, whichever instance it runs on.
  const takenStall = () => (settings.faults.stall ? (stall ??= takeStall(db)) : Promise.resolve(null));
  const paused = async (taken: { at: StallPoint; ms: number }) => {
    const resumed = recorder?.start("paused", `lab fault: paused ${taken.ms} ms ${pausedWhere(taken.at)}`);
    await pause(taken.ms);
    resumed?.("resumed");
  };
  return {
    async atCheckpoint(nextStep) {
      if (settings.faults.crash && settings.faults.crash !== "during-link") {
        // One-shot, like the pause: the first operation to reach a checkpoint takes it.
        crash ??= takeCrash(db);
        const point = await crash;
        if (point && point !== "during-link" && crashCheckpoint[point] === nextStep)
          throw new WorkCrashed(`crashed ${point} (lab fault)`);
      }
      const taken = await takenStall();
      if (!taken || checkpointAfter[taken.at] !== nextStep) return false;
      await paused(taken);
      return true;
    },
    async beforeSave() {
      const taken = await takenStall();
      if (taken?.at === "save") await paused(taken);
    },
    beforeRelease(attempt) {
      if (attempt <= settings.faults.releaseFailures) throw new Error("injected release failure (lab fault)");
    },
    async beforeRenew() {
      if (settings.faults.slowRenewalMs > 0) await pause(settings.faults.slowRenewalMs);
    },
    unfencedSave: settings.faults.unfencedSave,
  };
}

const pausedWhere = (at: StallPoint): string =>
  at === "save" ? "right before the save, after its last check" : `after ${at}`;
