/**
 * The lease's teaching and fault surface, kept out of its public API (index.ts): the textbook lease
 * without the safeguards, the hooks where a lab injects pauses, crashes and failing releases, and the
 * crash a hook can play. A product uses `withLease`; a lab that shows what the safeguards are for uses this.
 */
export {
  runUnderLease as withLeaseForTeaching,
  textbookTimeoutMs,
  WorkCrashed,
  type LeaseHooks,
  type TeachingOptions,
} from "./with-lease";
