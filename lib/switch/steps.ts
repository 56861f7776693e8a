/**
 * The switch's steps, in their order: the journal records the step each operation reached, and each step
 * but the last is the ownership check before the irreversible write that follows it. Every part of the code
 * that names a step, or the write after one, takes it from here.
 */
import type { JournalStep } from "../../db/schema";

/** The steps an operation reaches in order: acquired → (unlink) → unlinked → (link) → linked → (save). */
export type SwitchStep = Extract<JournalStep, "acquired" | "unlinked" | "linked">;

/** The irreversible write each step comes before: the checkpoint that guards it is named after it. */
export const writeAfter = { acquired: "unlink", unlinked: "link", linked: "save" } as const satisfies Record<
  SwitchStep,
  string
>;

export type SwitchWrite = (typeof writeAfter)[SwitchStep];

/** The provider write recovery sends to finish a switch left unlinked: it has its own checkpoint. */
export const recoveryLink = "recover-link";
