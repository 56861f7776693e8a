export { Deadline, sleep } from "./deadline";
export {
  leaseLock,
  type Acquisition,
  type IntentRecorder,
  type LeaseColumns,
  type LeaseHandle,
  type LeaseLock,
  type LeaseState,
} from "./lease-lock";
export {
  LeaseLostError,
  LeaseUnavailable,
  defaultMaxHoldMs,
  textbookTimeoutMs,
  withLease,
  WorkCrashed,
  type LeaseEvent,
  type LeaseHooks,
  type LeaseSection,
  type WithLeaseOptions,
} from "./with-lease";
