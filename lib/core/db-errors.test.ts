import { describe, expect, it } from "vitest";
import { isDatabaseUnavailable } from "./db-errors";

const withCode = (code: string, message = "failed") => Object.assign(new Error(message), { code });

describe("isDatabaseUnavailable", () => {
  it.each([
    [
      "a write on a node that is a standby now (25006)",
      withCode("25006", "cannot execute UPDATE in a read-only transaction"),
    ],
    [
      "a fast shutdown or a terminated backend (57P01)",
      withCode("57P01", "terminating connection due to administrator command"),
    ],
    ["a crashed server (57P02)", withCode("57P02")],
    ["a server starting or in recovery (57P03)", withCode("57P03", "the database system is starting up")],
    ["a connection reset", withCode("ECONNRESET", "read ECONNRESET")],
    ["a connection aborted", withCode("ECONNABORTED")],
    ["a connection the server dropped", new Error("Connection terminated unexpectedly")],
    ["a client closed after such an error", new Error("Client was closed and is not queryable")],
    ["a WAL function on a standby", withCode("55000", "recovery is in progress")],
    ["one of several attempts' errors", new AggregateError([new Error("x"), withCode("ECONNREFUSED")])],
    ["the cause of a wrapped error", new Error("outer", { cause: withCode("08006") })],
  ])("%s: 503", (_, error) => expect(isDatabaseUnavailable(error)).toBe(true));

  it.each([
    ["a unique violation (a bug)", withCode("23505")],
    ["another 55000", withCode("55000", "lock is not available for this object")],
    ["an error with no code", new Error("undefined is not a function")],
    ["not an error", "ECONNRESET"],
  ])("%s: not 503", (_, error) => expect(isDatabaseUnavailable(error)).toBe(false));
});
