/** The switch's provider calls as steps: what a failure of each means for the operation. */
import {
  FencedOff,
  LeaseLost,
  ProviderDeadlineExceeded,
  ProviderStepFailed,
  type Problem,
  type ProviderStep,
} from "../core/problems";
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
    throw problemFor(section, step, error, () =>
      error.kind === "deadline"
        ? new ProviderDeadlineExceeded(step)
        : new ProviderStepFailed(step, error.status, error.message),
    );
  }
}

/** A provider failure as the operation's problem: a lost lease, a fenced call, or what the step makes of it. */
export function problemFor(
  section: GuardedSection,
  step: ProviderStep | "recover",
  error: ProviderCallError,
  otherwise: () => Problem,
): Problem {
  if (error.kind === "deadline" && section.deadline.firedBecause === "lease-lost") return new LeaseLost(step);
  if (error.errorCode === "fenced_token") return new FencedOff(step, error.message);
  return otherwise();
}
