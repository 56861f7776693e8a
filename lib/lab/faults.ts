/**
 * The lab's faults in the app's own code, handed to the lease as hooks: a one-shot pause, a one-shot crash,
 * failing releases.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { setTimeout as pause } from "node:timers/promises";
import { WorkCrashed, type LeaseHooks } from "../lease";
import type { CrashPoint, LabSettings, StallPoint } from "./settings-schema";
import { takeCrash, takeStall } from "./settings-store";
import type { PhaseRecorder } from "./timeline";

/** A pause "after reaching X" happens at the checkpoint before the step that follows X. */
const checkpointAfter: Record<StallPoint, string> = {
  acquired: "unlink",
  unlinked: "link",
  linked: "save",
  saved: "release",
};

/** A crash "after X" happens at the checkpoint before the step that follows X. */
const crashCheckpoint: Record<CrashPoint, string> = {
  "after-acquire": "unlink",
  "after-unlink": "link",
  "after-link": "save",
};

export function labFaultHooks(db: Kysely<Database>, settings: LabSettings, recorder?: PhaseRecorder): LeaseHooks {
  let stall: Promise<{ at: StallPoint; ms: number } | null> | undefined;
  let crash: Promise<CrashPoint | null> | undefined;
  return {
    async atCheckpoint(nextStep) {
      if (settings.faults.crash) {
        // One-shot, like the pause: the first operation to reach a checkpoint takes it.
        crash ??= takeCrash(db);
        const point = await crash;
        if (point && crashCheckpoint[point] === nextStep) throw new WorkCrashed(`crashed ${point} (lab fault)`);
      }
      if (!settings.faults.stall) return false;
      // One-shot: the first operation to reach a checkpoint takes the armed pause, whichever instance it runs on.
      stall ??= takeStall(db);
      const taken = await stall;
      if (!taken || checkpointAfter[taken.at] !== nextStep) return false;
      const paused = recorder?.start("paused", `lab fault: paused ${taken.ms} ms after ${taken.at}`);
      await pause(taken.ms);
      paused?.("resumed");
      return true;
    },
    beforeRelease(attempt) {
      if (attempt <= settings.faults.releaseFailures) throw new Error("injected release failure (lab fault)");
    },
  };
}
