/**
 * The lab's faults at the switch's steps, as a guard that wraps another: a one-shot pause after a step (as a
 * GC pause or a stopped process would), or right before the save, after its last check; and a one-shot
 * crash after a step, which stops the operation dead: its body never goes on, no `finally` runs, nothing
 * is released or renewed (its process, `PlayedProcess`, is dead), and its caller is answered 503
 * `operation-crashed` so that the page can say what happened. One-shot: the first operation to reach a step
 * takes the armed fault, whichever instance it runs on.
 */
import { setTimeout as pause } from "node:timers/promises";
import type { Kysely } from "kysely";
import type { Database } from "../../../db/schema";
import { OperationCrashed } from "../../core/problems";
import { shortId } from "../../switch/events";
import type { Guard, GuardedSection } from "../../switch/guard";
import { writeAfter, type SwitchStep } from "../../switch/guard";
import type { OperationRecorder } from "../lane-recorder";
import type { CrashPoint, LabSettings, StallPoint } from "../settings-schema";
import { takeCrash, takeStall } from "../settings-store";
import type { PlayedProcess } from "./faulty-lock";

interface StepFaults {
  db: Kysely<Database>;
  settings: LabSettings;
  process: PlayedProcess;
  recorder?: OperationRecorder;
}

/** The crashes at a step; the one during the link is played by the provider's client (crash-during-call.ts). */
const crashedAfter: Record<Exclude<CrashPoint, "during-link">, SwitchStep> = {
  "after-acquire": "acquired",
  "after-unlink": "unlinked",
  "after-link": "linked",
};

type Stall = { at: StallPoint; ms: number };

export function withStepFaults(guard: Guard, faults: StepFaults): Guard {
  const { settings, process, recorder } = faults;
  if (!settings.faults.stall && !settings.faults.crash) return guard;
  return {
    checksRequirements: guard.checksRequirements,
    run: (request, body) =>
      new Promise((resolve, reject) => {
        process.onDeath((point) => {
          recorder?.mark("crashed", "crashed", `crashed ${point} (lab fault)`);
          reject(new OperationCrashed(`Operation ${shortId(request.operationId)} crashed ${point} (lab fault)`));
        });
        guard.run(request, (section) => body(faultySection(section, faults))).then(resolve, reject);
      }),
  };
}

function faultySection(section: GuardedSection, faults: StepFaults) {
  const { db, settings, process, recorder } = faults;
  let stall: Promise<Stall | null> | undefined;
  let crash: Promise<CrashPoint | null> | undefined;
  const armedAtStep = settings.faults.crash && settings.faults.crash !== "during-link";
  const takenStall = () => (settings.faults.stall ? (stall ??= takeStall(db)) : Promise.resolve(null));
  const takenCrash = () => (armedAtStep ? (crash ??= takeCrash(db)) : Promise.resolve(null));
  const paused = async (taken: Stall) => {
    const resumed = recorder?.start("paused", `lab fault: paused ${taken.ms} ms ${pausedWhere(taken.at)}`);
    await pause(taken.ms);
    resumed?.("resumed");
  };
  return {
    ...section,
    async reached(step: SwitchStep, fromIdentityId?: string) {
      await section.reached(step, fromIdentityId);
      const point = await takenCrash();
      if (point && point !== "during-link" && crashedAfter[point] === step) {
        process.die(point);
        return new Promise<never>(() => undefined); // a dead process goes no further
      }
      const taken = await takenStall();
      if (taken?.at !== step) return;
      await paused(taken);
      // A pause is a moment no earlier check covers: the lease is checked again before the write.
      await section.ensureHeld(writeAfter[step]);
    },
    async savePrimary(primaryIdentityId: string, options?: { finishing: boolean }) {
      if (!options?.finishing) return section.savePrimary(primaryIdentityId, options);
      const taken = await takenStall();
      if (taken?.at === "save") await paused(taken);
      await section.savePrimary(primaryIdentityId, options);
      if (taken?.at === "saved") await paused(taken);
    },
  };
}

const pausedWhere = (at: StallPoint): string =>
  at === "save" ? "right before the save, after its last check" : `after ${at}`;
