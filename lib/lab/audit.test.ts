import { describe, expect, it } from "vitest";
import { auditUser, callsThatMayLand, settlingOf, settlingOfAll } from "./audit";
import type { ProviderAccount } from "../provider/client";
import type { ProviderCall } from "../provider-sim/lab-client";

const account = (...ids: string[]): ProviderAccount => ({ accountId: ids[0]!, identityIds: ids });
const call = (method: string, path: string, status: number, operationId: string, more: Partial<ProviderCall> = {}) => ({
  at: "",
  method,
  path,
  status,
  outcome: null,
  operationId,
  durationMs: 1,
  ...more,
});
const mine = ["google-oauth2|1", "github|2", "apple|3"];

describe("the audit, in plain words", () => {
  it("finds nothing wrong when all identities sit under the local primary", () => {
    expect(
      auditUser("ada", "google-oauth2|1", mine, [account("google-oauth2|1", "github|2", "apple|3")]),
    ).toMatchObject({
      consistent: true,
      providerPrimaryIdentityId: "google-oauth2|1",
      violations: [],
    });
  });

  it("names a different primary, an orphan, a split-off group, a missing identity and a stranger", () => {
    const audit = auditUser(
      "ada",
      "google-oauth2|1",
      [...mine, "auth0|4", "github|9"],
      [account("github|2", "google-oauth2|1", "gitlab|7"), account("apple|3"), account("auth0|4")],
    );
    expect(audit.consistent).toBe(false);
    expect(audit.providerPrimaryIdentityId).toBe("github|2");
    expect(audit.violations).toEqual([
      "github|9 is missing at the provider",
      "provider primary is github|2, local primary is google-oauth2|1",
      "apple|3 is orphaned in its own account",
      "auth0|4 is orphaned in its own account",
      "gitlab|7, not ada's, is linked under github|2",
    ]);
  });

  it("names identities that sit apart together in another account", () => {
    const audit = auditUser("ada", "google-oauth2|1", mine, [
      account("google-oauth2|1"),
      account("github|2", "apple|3"),
    ]);
    expect(audit.violations).toContain("google-oauth2|1 is orphaned in its own account");
  });

  it("links a finding to the operations whose applied calls touched its identities", () => {
    const audit = auditUser(
      "ada",
      "google-oauth2|1",
      mine,
      [account("google-oauth2|1", "github|2"), account("apple|3")],
      [
        call("DELETE", "/api/v2/users/google-oauth2|1/identities/apple/3", 200, "op-unlinked-it"),
        call("POST", "/api/v2/users/apple|3/identities", 400, "op-unlinked-it"),
        call("DELETE", "/api/v2/users/google-oauth2|1/identities/apple/3", 404, "op-refused"),
        call("DELETE", "/api/v2/users/google-oauth2|1/identities/github/2", 200, "op-unrelated"),
      ],
    );
    expect(audit.findings).toEqual([
      {
        violation: "apple|3 is orphaned in its own account",
        identityIds: ["apple|3"],
        operationIds: ["op-unlinked-it"],
      },
    ]);
  });
});

describe("whether the audit has settled", () => {
  const at = (iso: string) => new Date(iso);

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

  it("counts a logged call with no answer as landing until the apply limit after its log time", () => {
    const now = at("2026-01-01T10:00:04.000Z");
    const calls = [
      call("DELETE", "/api/v2/users/google-oauth2|1/identities/github/2", 0, "op", {
        at: "2026-01-01T10:00:00.000Z",
        outcome: "timeout",
      }),
      call("POST", "/api/v2/users/google-oauth2|1/identities", 499, "op", {
        at: "2026-01-01T10:00:01.000Z",
        outcome: "client-closed",
      }),
      // Answered, long past its limit, or another user's: nothing can land from these.
      call("DELETE", "/api/v2/users/google-oauth2|1/identities/apple/3", 200, "op", { at: "2026-01-01T10:00:03.000Z" }),
      call("DELETE", "/api/v2/users/google-oauth2|1/identities/apple/3", 0, "op", {
        at: "2026-01-01T09:59:00.000Z",
        outcome: "network-error",
      }),
      call("DELETE", "/api/v2/users/auth0|9/identities/github/9", 0, "other", {
        at: "2026-01-01T10:00:03.000Z",
        outcome: "timeout",
      }),
    ];
    expect(callsThatMayLand(calls, mine, 5_000, now)).toEqual([
      at("2026-01-01T10:00:05.000Z"),
      at("2026-01-01T10:00:06.000Z"),
    ]);
  });
});
