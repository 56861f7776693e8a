import { describe, expect, it } from "vitest";
import { splitIdentityId } from "../../db/schema";
import { accountFromProvider, backoffMs } from "./client";

describe("backoff", () => {
  it("grows exponentially with jitter between half and the whole step", () => {
    expect(backoffMs(1, null, () => 0)).toBe(50);
    expect(backoffMs(1, null, () => 1)).toBe(100);
    expect(backoffMs(3, null, () => 1)).toBe(400);
  });

  it("never waits less than the provider's Retry-After", () => {
    expect(backoffMs(1, 2_000, () => 1)).toBe(2_000);
    expect(backoffMs(6, 1_000, () => 1)).toBe(3_200);
  });
});

it("splits an identity id at its first bar only", () => {
  expect(splitIdentityId("auth0|abc|def")).toEqual({ provider: "auth0", providerUserId: "abc|def" });
});

it("reshapes the provider's account into the app's words at the client's edge", () => {
  const raw = {
    user_id: "github|8812",
    identities: [
      { provider: "github", user_id: "8812" },
      { provider: "auth0", user_id: "a|b" },
    ],
  };
  expect(accountFromProvider(raw)).toEqual({ accountId: "github|8812", identityIds: ["github|8812", "auth0|a|b"] });
});
