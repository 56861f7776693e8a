export { Deadline, sleep, type DeadlineCause } from "./deadline.ts";
export type { HoldersPage, HoldersQuery, LeaseHolder } from "./holders.ts";
export {
  leaseLock,
  primaryGeneration,
  type Acquisition,
  type AcquireOptions,
  type LeaseColumns,
  type LeaseHandle,
  type LeaseLock,
  type LeaseLockOptions,
  type LeaseState,
  type Owner,
  type RowId,
  type StatementRecorder,
} from "./lease-lock.ts";
export {
  CompiledStatements,
  executeOnce,
  MadeOnce,
  mergedValues,
  none,
  param,
  statement,
  Param,
  type ParamValues,
  type Statement,
} from "./statements.ts";
export {
  LeaseLostError,
  LeaseUnavailable,
  defaultMaxHoldMs,
  safetyMarginMs,
  withLease,
  type LeaseEvent,
  type LeaseSection,
  type RunUnderLease,
  type WithLeaseOptions,
} from "./with-lease.ts";
