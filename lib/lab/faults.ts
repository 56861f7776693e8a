/** The lab's faults in the app's own code, handed to the lease as hooks: a one-shot pause, failing releases. */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { setTimeout as pause } from "node:timers/promises";
import type { LeaseHooks } from "../lease";
import type { LabSettings, StallPoint } from "./settings-schema";
import { takeStall } from "./settings-store";
import type { PhaseRecorder } from "./timeline";

/** A pause "after reaching X" happens at the checkpoint before the step that follows X. */
const checkpointAfter: Record<StallPoint, string> = {
  acquired: "unlink",
  unlinked: "link",
  linked: "save",
  saved: "release",
};

export function labFaultHooks(db: Kysely<Database>, settings: LabSettings, recorder?: PhaseRecorder): LeaseHooks {
  let stall: Promise<{ at: StallPoint; ms: number } | null> | undefined;
  return {
    async atCheckpoint(nextStep) {
      if (!settings.faults.stall) return;
      // One-shot: the first operation to reach a checkpoint takes the armed pause, whichever instance it runs on.
      stall ??= takeStall(db);
      const taken = await stall;
      if (!taken || checkpointAfter[taken.at] !== nextStep) return;
      const paused = recorder?.start("paused", `lab fault: paused ${taken.ms} ms after ${taken.at}`);
      await pause(taken.ms);
      paused?.("resumed");
    },
    beforeRelease(attempt) {
      if (attempt <= settings.faults.releaseFailures) throw new Error("injected release failure (lab fault)");
    },
  };
}
