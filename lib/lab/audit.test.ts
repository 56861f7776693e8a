import { describe, expect, it } from "vitest";
import { auditUser } from "./audit";
import type { ProviderAccount } from "../provider/client";
import type { ProviderCall } from "../provider-sim/lab-client";

const account = (...ids: string[]): ProviderAccount => ({ accountId: ids[0]!, identityIds: ids });
const call = (method: string, path: string, status: number, operationId: string, more: Partial<ProviderCall> = {}) => ({
  id: "1",
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
