import { describe, expect, it } from "vitest";
import type { ProviderCall } from "../provider-sim/lab-client";
import {
  allLogged,
  pendingOf,
  settlingOf,
  settlingOfAll,
  type JournalFact,
  type UnansweredWrite,
  type UserActivity,
} from "./settling";

const at = (iso: string) => new Date(iso);
const now = at("2026-01-01T10:00:04.000Z");
const quiet: UserActivity = { lease: null, journal: [], unboundedRequests: 0, unansweredWrites: [] };
const entry = (more: Partial<JournalFact> = {}): JournalFact => ({
  operationId: "op",
  fence: "3",
  open: true,
  endedWith: null,
  inFlightUntil: null,
  answered: false,
  ...more,
});
const unlinkPath = "/api/v2/users/google-oauth2|1/identities/github/2";
const lostUnlink = (more: Partial<UnansweredWrite> = {}): UnansweredWrite => ({
  operationId: "op",
  phase: "unlink",
  accounts: ["google-oauth2|1", "github|2"],
  attempts: 1,
  until: at("2026-01-01T10:00:06.000Z"),
  ...more,
});
const logged = (method: string, path: string, more: Partial<ProviderCall> = {}): ProviderCall => ({
  id: "1",
  at: "2026-01-01T10:00:03.000Z",
  method,
  path,
  status: 200,
  outcome: null,
  operationId: "op",
  durationMs: 1,
  ...more,
});
const settlingFor = (activity: Partial<UserActivity>, calls: ProviderCall[] = []) =>
  settlingOf(pendingOf({ ...quiet, ...activity }, calls, now));

describe("whether the audit has settled", () => {
  it("is settled with nothing pending, and says until the latest bound otherwise", () => {
    expect(settlingOf([])).toEqual({ settled: true, settlingUntil: null });
    expect(settlingOf([at("2026-01-01T10:00:05.000Z"), at("2026-01-01T10:00:02.000Z")])).toEqual({
      settled: false,
      settlingUntil: "2026-01-01T10:00:05.000Z",
    });
  });

  it("does not know until when as soon as one thing pending has no bound", () => {
    expect(settlingOf([at("2026-01-01T10:00:05.000Z"), null])).toEqual({ settled: false, settlingUntil: null });
  });

  it("settles the whole audit when every user has, else waits for the latest user", () => {
    const settled = { settled: true, settlingUntil: null };
    expect(settlingOfAll([settled, settled])).toEqual(settled);
    expect(
      settlingOfAll([
        settled,
        { settled: false, settlingUntil: "2026-01-01T10:00:01.000Z" },
        { settled: false, settlingUntil: "2026-01-01T10:00:03.000Z" },
      ]),
    ).toEqual({ settled: false, settlingUntil: "2026-01-01T10:00:03.000Z" });
    expect(settlingOfAll([{ settled: false, settlingUntil: null }, settled])).toEqual({
      settled: false,
      settlingUntil: null,
    });
  });
});

describe("a user with a journal entry", () => {
  const lease = { fence: "3", until: at("2026-01-01T10:00:07.000Z") };

  it("while its operation runs, holding its lease: settling until the lease's expiry and its calls' bound", () => {
    const inFlightUntil = at("2026-01-01T10:00:09.000Z");
    expect(settlingFor({ lease, journal: [entry({ inFlightUntil })] })).toEqual({
      settled: false,
      settlingUntil: "2026-01-01T10:00:09.000Z",
    });
  });

  it("open after its operation answered (a 502, a 504): not settled, and nobody knows when the repair comes", () => {
    const ended = entry({ answered: true, endedWith: "the provider failed the link step" });
    expect(settlingFor({ journal: [ended] })).toEqual({ settled: false, settlingUntil: null });
    // Its lease kept for the unknown outcome changes nothing: the entry still waits for its repair.
    expect(settlingFor({ lease, journal: [ended] })).toEqual({ settled: false, settlingUntil: null });
  });

  it("open after a crash: waiting for a repair once its lease is gone or its request answered", () => {
    // A process killed mid-switch: its request never answered; its lease expired unrenewed.
    expect(settlingFor({ journal: [entry()] })).toEqual({ settled: false, settlingUntil: null });
    // The lab's crash fault answers the request at once: the lease left to its TTL bounds nothing.
    expect(settlingFor({ lease, journal: [entry({ answered: true })] })).toEqual({
      settled: false,
      settlingUntil: null,
    });
    // Another holder's lease: the entry's own holder no longer runs.
    expect(settlingFor({ lease: { ...lease, fence: "4" }, journal: [entry()] })).toMatchObject({ settled: false });
    expect(settlingFor({ lease: { ...lease, fence: "4" }, journal: [entry()] }).settlingUntil).toBeNull();
  });

  it("settled as soon as the entry is closed and nothing else may land", () => {
    const resolved = entry({ open: false, answered: true });
    expect(settlingFor({ journal: [resolved] })).toEqual({ settled: true, settlingUntil: null });
  });

  it("a closed entry of an operation that never answered still bounds its calls until its in-flight bound", () => {
    const inFlightUntil = at("2026-01-01T10:00:05.500Z");
    expect(settlingFor({ journal: [entry({ open: false, inFlightUntil })] })).toEqual({
      settled: false,
      settlingUntil: "2026-01-01T10:00:05.500Z",
    });
  });
});

describe("a provider write whose caller got no answer", () => {
  it("may land until its bound while the provider's log does not have it", () => {
    expect(settlingFor({ unansweredWrites: [lostUnlink()] })).toEqual({
      settled: false,
      settlingUntil: "2026-01-01T10:00:06.000Z",
    });
  });

  it("can no longer land once the log has each of its requests: applied after its caller left, or fenced", () => {
    for (const outcome of ["client-closed", "fenced", "applied-late", "deadline-passed"]) {
      const calls = [logged("DELETE", unlinkPath, { outcome })];
      expect(settlingFor({ unansweredWrites: [lostUnlink()] }, calls), outcome).toEqual({
        settled: true,
        settlingUntil: null,
      });
    }
  });

  it("counts its retries: every request it sent must be in the log", () => {
    const write = lostUnlink({ attempts: 3 });
    const networkError = logged("DELETE", unlinkPath, { status: 0, outcome: "network-error" });
    expect(allLogged(write, [networkError, networkError])).toBe(false);
    expect(
      allLogged(write, [networkError, networkError, logged("DELETE", unlinkPath, { outcome: "client-closed" })]),
    ).toBe(true);
  });

  it("matches the log by operation, method and path, and trusts no count it was not given", () => {
    const other = [
      logged("DELETE", unlinkPath, { operationId: "another" }),
      logged("POST", "/api/v2/users/google-oauth2|1/identities"),
      logged("DELETE", "/api/v2/users/google-oauth2|1/identities/apple/3"),
    ];
    expect(allLogged(lostUnlink(), other)).toBe(false);
    expect(allLogged(lostUnlink({ attempts: null }), [logged("DELETE", unlinkPath)])).toBe(false);
    const link = lostUnlink({ phase: "link", accounts: ["github|2", "google-oauth2|1"] });
    expect(allLogged(link, [logged("POST", "/api/v2/users/github|2/identities")])).toBe(true);
  });

  it("past its bound it counts no more, logged or not", () => {
    expect(settlingFor({ unansweredWrites: [lostUnlink({ until: at("2026-01-01T10:00:03.000Z") })] })).toEqual({
      settled: true,
      settlingUntil: null,
    });
  });
});

describe("a request nothing bounds", () => {
  it("keeps the user settling until nobody knows when", () => {
    expect(settlingFor({ unboundedRequests: 1 })).toEqual({ settled: false, settlingUntil: null });
  });
});
