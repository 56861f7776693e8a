/** Telling a database that cannot be reached from a bug; no pg import, so the proxy can use it too. */
// Node's socket errors, PostgreSQL's connection-exception class (08), "too many connections", server
// shutting down, crashed, starting or in recovery (57P01 admin_shutdown: a fast shutdown or a terminated
// backend; 57P02; 57P03), the configured timeouts: query_canceled (statement_timeout) and lock_not_available
// (lock_timeout); and 25006 read_only_sql_transaction: during or after a failover, a write reached a node
// that is a standby now (a connection opened before the address moved, as after an Aurora failover).
const unreachableCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EPIPE",
]);
const unavailableSqlStates = /^(08...|53300|57P0[1-4]|57014|55P03|25006)$/;
// A function a standby cannot run (the generation's WAL position, on a node in recovery) says so in words:
// 55000 object_not_in_prerequisite_state is otherwise a bug.
const inRecovery = (code: unknown, message: string) => code === "55000" && /recovery is in progress/.test(message);
// pg and pg-pool report a connect timeout and a dropped connection only in words (the last two: a query on
// a client whose connection the server already terminated, or that was closed after such an error).
const unreachableMessages = new RegExp(
  `^(${[
    "timeout expired",
    "timeout exceeded when trying to connect",
    "Connection terminated",
    "Client has encountered a connection error",
    "Client was closed and is not queryable",
  ].join("|")})`,
);

/** Whether `error` means the database could not be reached in time (a 503), rather than a bug (a 500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (unreachableCodes.has(code) || unavailableSqlStates.test(code))) return true;
  if (inRecovery(code, error.message)) return true;
  if (unreachableMessages.test(error.message)) return true;
  if (error instanceof AggregateError && error.errors.some(isDatabaseUnavailable)) return true;
  return isDatabaseUnavailable(error.cause);
}
