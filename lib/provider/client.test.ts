import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { splitIdentityId } from "../../db/schema";
import { Deadline } from "@lease-lock-lab/lease";
import { accountFromProvider, backoffMs, identityProviderClient, ProviderCallError } from "./client";

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

describe("calls over HTTP", () => {
  /** A server that answers its n-th call (from 1) as `answers` says, and counts the calls and the callers who left. */
  async function providerAnswering(answers: (call: number, response: http.ServerResponse) => void) {
    let calls = 0;
    let left = 0;
    const headers: http.IncomingHttpHeaders[] = [];
    const server = http.createServer((request, response) => {
      headers.push(request.headers);
      response.on("close", () => (left += response.writableFinished ? 0 : 1));
      request.resume();
      request.on("end", () => answers(++calls, response));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = identityProviderClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => ({
      "X-Stamp": "1",
    }));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return { client, headers, calls: () => calls, left: () => left, close: () => server.closeAllConnections() };
  }
  const json = (response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    response.writeHead(status, { "Content-Type": "application/json", ...headers }).end(JSON.stringify(body));
  const context = (budgetMs = 5_000) => ({ operationId: "op-1", deadline: new Deadline(budgetMs), fence: 7n });
  const failureOf = (call: Promise<unknown>) =>
    call.then(
      () => expect.unreachable("the call should have failed"),
      (error: unknown) => error as ProviderCallError,
    );

  it("retries a 503 after its Retry-After and returns the next answer", async () => {
    const provider = await providerAnswering((call, response) =>
      call === 1 ? json(response, 503, { message: "later" }, { "Retry-After": "0" }) : json(response, 200, rawAccount),
    );
    const account = await provider.client.getAccount("github|8812", context());
    expect(account.identityIds).toEqual(["github|8812"]);
    expect(provider.calls()).toBe(2);
    // Every attempt carries the operation, its fence and the caller's stamp.
    for (const headers of provider.headers)
      expect(headers).toMatchObject({ "x-operation-id": "op-1", "x-fencing-token": "7", "x-stamp": "1" });
  });

  it("answers a 409 as an http failure with its error code, not retried, and not a write that may have landed", async () => {
    const provider = await providerAnswering((_, response) =>
      json(response, 409, { message: "already linked", errorCode: "identity_conflict" }),
    );
    const error = await failureOf(provider.client.linkAccount("github|8812", "auth0|x", context()));
    expect(error).toBeInstanceOf(ProviderCallError);
    expect([error.kind, error.status, error.errorCode, error.message]).toEqual([
      "http",
      409,
      "identity_conflict",
      "already linked",
    ]);
    expect([error.mayHaveLanded, provider.calls()]).toEqual([false, 1]);
  });

  it("gives up at once when the provider's Retry-After passes the deadline", async () => {
    const provider = await providerAnswering((_, response) => json(response, 429, {}, { "Retry-After": "10" }));
    const error = await failureOf(provider.client.getAccount("github|8812", context(1_000)));
    expect([error.kind, error.status, provider.calls()]).toEqual(["deadline", 429, 1]);
    expect(error.message).toMatch(/next would pass the deadline/);
  });

  it("tries a reset connection again; a call never answered is cut at the deadline and may have landed", async () => {
    const reset = await providerAnswering((call, response) =>
      call === 1 ? response.socket?.resetAndDestroy() : json(response, 200, rawAccount),
    );
    expect((await reset.client.getAccount("github|8812", context())).accountId).toBe("github|8812");
    expect(reset.calls()).toBe(2);

    const silent = await providerAnswering(() => undefined);
    const error = await failureOf(silent.client.unlinkIdentity("github|8812", "auth0|x", context(150)));
    expect([error.kind, error.status, error.mayHaveLanded]).toEqual(["deadline", null, true]);
    // The abort closed the connection: the provider sees its caller leave, as the simulator reports it.
    await vi.waitFor(() => expect(silent.left()).toBe(1));
    silent.close();
  });
});

const rawAccount = { user_id: "github|8812", identities: [{ provider: "github", user_id: "8812" }] };
