/** The switch's provider calls as steps, and the one place a provider's failure becomes the operation's problem. */
import {
  FencedOff,
  LeaseLost,
  ProviderDeadlineExceeded,
  ProviderStepFailed,
  RecoveryFailed,
  type Problem,
  type ProviderStep,
} from "../core/problems";
import type { Deadline } from "@lease-lock-lab/lease";
import { ProviderCallError, type IdentityProviderClient, type ProviderCallContext } from "../provider/client";
import type { GuardedSection } from "./guard";

/** A link whose earlier attempt may have landed: "already exists" means the identity is where we want it. */
export async function linkTolerant(
  provider: IdentityProviderClient,
  primaryId: string,
  secondaryId: string,
  context: ProviderCallContext,
): Promise<void> {
  try {
    await provider.linkAccount(primaryId, secondaryId, context);
  } catch (error) {
    if (error instanceof ProviderCallError && error.status === 409 && error.errorCode === "identity_conflict") return;
    throw error;
  }
}

/** Runs a provider write of the switch; a failure is the step's problem, and a lost answer is noted. */
export async function providerStep(
  section: GuardedSection,
  step: ProviderStep,
  call: () => Promise<unknown>,
): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    if (error.mayHaveLanded) section.callMayStillLand();
    throw providerProblem(step, error, section.deadline);
  }
}

/** A call shut out by the lease's end (its deadline fired because the lease was lost) or by the provider's fence. */
function shutOut(step: ProviderStep | "recover", error: ProviderCallError, deadline: Deadline): Problem | null {
  if (error.kind === "deadline" && deadline.firedBecause === "lease-lost") return new LeaseLost(step);
  if (error.errorCode === "fenced_token") return new FencedOff(step, error.message);
  return null;
}

/** A failed step's problem: shut out, out of time (504), or the provider's own failure (502). */
export function providerProblem(step: ProviderStep, error: ProviderCallError, deadline: Deadline): Problem {
  return (
    shutOut(step, error, deadline) ??
    (error.kind === "deadline"
      ? new ProviderDeadlineExceeded(step)
      : new ProviderStepFailed(step, error.status, error.message))
  );
}

/** A failed recovery's problem: shut out, or the recovery failed (`what` says which switch it was settling). */
export function recoveryProblem(error: ProviderCallError, deadline: Deadline, what: string): Problem {
  return shutOut("recover", error, deadline) ?? new RecoveryFailed(`${what} failed: ${error.message}`, error.status);
}
