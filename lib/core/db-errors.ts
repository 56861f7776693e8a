/** Telling a database that cannot be reached from a bug; no pg import, so the proxy can use it too. */
// Node's socket errors, PostgreSQL's connection-exception class (08), "too many connections", server
// shutting down or starting, and the configured timeouts: query_canceled (statement_timeout) and
// lock_not_available (lock_timeout).
const unreachableCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EPIPE"]);
const unavailableSqlStates = /^(08...|53300|57P0[1-4]|57014|55P03)$/;
// pg and pg-pool report a connect timeout and a dropped connection only in words (the last: a query on a
// client whose connection the server already terminated).
const unreachableMessages =
  /^(timeout expired|timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error)/;

/** Whether `error` means the database could not be reached in time (a 503), rather than a bug (a 500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (unreachableCodes.has(code) || unavailableSqlStates.test(code))) return true;
  if (unreachableMessages.test(error.message)) return true;
  if (error instanceof AggregateError && error.errors.some(isDatabaseUnavailable)) return true;
  return isDatabaseUnavailable(error.cause);
}
