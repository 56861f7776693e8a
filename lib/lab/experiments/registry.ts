/**
 * Every experiment, in the order the Learn view shows them: the article's five questions, then its failure
 * modes. The course teaches them in its own order (course.ts), where each one's lesson is.
 */
import { advisoryNotEnforced } from "./advisory-not-enforced";
import { crashAfterAcquire } from "./f1-crash-after-acquire";
import { leaseStolen } from "./f2-lease-stolen";
import { releaseFailsAfterCalls } from "./f3-release-fails";
import { raceToAcquireTwo } from "./f4-race-to-acquire";
import { inProcessMutex } from "./in-process-mutex";
import { transactionHoldsConnections } from "./q1-transaction-holds-connections";
import { simultaneousAcquire } from "./q2-simultaneous-acquire";
import { ttlTooLong } from "./q3-ttl-too-long";
import { ttlTooShort } from "./q3-ttl-too-short";
import { lockColumnMapped } from "./q4-lock-column-mapped";
import { advisoryOrLease } from "./q5-advisory-or-lease";
import { partsNow, startCommand } from "../parts";
import { poolerStrandsSessionLock } from "./pooler-strands-session-lock";
import { redisRestartLosesLock } from "./redis-restart-loses-lock";
import { failoverAsyncLosesLease } from "./failover-async-loses-lease";
import { failoverSyncKeepsLease } from "./failover-sync-keeps-lease";
import { haFailoverUnderLoad } from "./ha-failover-under-load";
import { lessons, placeInCourse } from "./course";
import type { Experiment, ListedExperiment } from "./types";

export const experiments: Experiment[] = [
  transactionHoldsConnections,
  simultaneousAcquire,
  ttlTooShort,
  ttlTooLong,
  lockColumnMapped,
  advisoryOrLease,
  crashAfterAcquire,
  leaseStolen,
  releaseFailsAfterCalls,
  raceToAcquireTwo,
  advisoryNotEnforced,
  inProcessMutex,
  poolerStrandsSessionLock,
  redisRestartLosesLock,
  failoverAsyncLosesLease,
  failoverSyncKeepsLease,
  haFailoverUnderLoad,
];

export const experimentCards = async (): Promise<ListedExperiment[]> => {
  const ids = experiments.map((experiment) => experiment.id);
  const { running, awaited } = await partsNow();
  return experiments.map(({ id, title, question, failureMode, expected, tryNext, needs = [] }) => {
    const available = needs.every((part) => running.has(part));
    return {
      id,
      title,
      question,
      failureMode,
      expected,
      tryNext,
      needs,
      available,
      awaitingParts: !available && needs.some((part) => awaited.has(part)),
      startWith: needs.length > 0 ? startCommand(needs) : null,
      ...lessons[id]!,
      ...placeInCourse(id, ids),
    };
  });
};
