import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDb } from "../../db/connection";
import { seedProviderAccounts } from "../../db/seed-data";
import type { IdpDatabase } from "./schema";
import { getAccount, IdpError, linkAccount, resetProviderState, unlinkIdentity } from "./store";

// After an asynchronous replica is promoted, the lease's database can issue a fence again: two holders
// carry the same number. The provider, enforcing fencing, lets the first holder of a fence go on and refuses
// the same fence from another holder.
const { db } = createDb<IdpDatabase>(inject("databaseUrl"), 2);
const fencing = (fence: bigint, holder: string | null, generation: bigint | null = null, byGeneration = true) => ({
  fence,
  generation,
  holder,
  enforce: true,
  byGeneration,
});
const refusal = (call: Promise<unknown>) =>
  call.then(
    () => null,
    (error: unknown) =>
      error instanceof IdpError ? { statusCode: error.statusCode, errorCode: error.errorCode } : error,
  );

beforeAll(() => resetProviderState(db, seedProviderAccounts()));
afterAll(async () => {
  await resetProviderState(db, seedProviderAccounts());
  await db.destroy();
});

describe("the provider's fence check, with the holder of each fence", () => {
  it("refuses an equal fence from another holder, accepts it from the same one, and a higher one from anyone", async () => {
    const main = "google-oauth2|104423";
    await getAccount(db, main, fencing(7n, "operation-a")); // a fenced read registers fence 7 for operation-a
    expect(await refusal(unlinkIdentity(db, main, "github", "8812", fencing(7n, "operation-b")))).toEqual({
      statusCode: 409,
      errorCode: "fenced_token",
    });
    // Nothing changed: github is still linked under the main account, and operation-a goes on.
    expect((await getAccount(db, main, fencing(7n, "operation-a"))).identities.map((each) => each.user_id)).toContain(
      "8812",
    );
    await unlinkIdentity(db, main, "github", "8812", fencing(7n, "operation-a"));
    await linkAccount(db, main, "github", "8812", fencing(7n, "operation-a"));
    // A lower fence is refused whoever brings it; a higher one makes its holder the fence's.
    expect(await refusal(unlinkIdentity(db, main, "github", "8812", fencing(6n, "operation-a")))).toEqual({
      statusCode: 409,
      errorCode: "fenced_token",
    });
    await unlinkIdentity(db, main, "github", "8812", fencing(8n, "operation-b"));
    expect(await refusal(linkAccount(db, main, "github", "8812", fencing(8n, "operation-a")))).toEqual({
      statusCode: 409,
      errorCode: "fenced_token",
    });
    // A call that names no holder is checked by its number only.
    await linkAccount(db, main, "github", "8812", fencing(8n, null));
  });

  it("compares (generation, fence) in that order: a holder of a newer generation outranks any fence of an older one", async () => {
    await resetProviderState(db, seedProviderAccounts());
    const main = "google-oauth2|104423";
    // Before a promotion that lost acquisitions: operation-a took fence 8 in generation 1 and registered it.
    await getAccount(db, main, fencing(8n, "operation-a", 1n));
    // On the promoted primary the counter went back: operation-b has fence 7, in generation 2. It goes on…
    await unlinkIdentity(db, main, "github", "8812", fencing(7n, "operation-b", 2n));
    // …and operation-a's late write, whose counter is higher, is refused: its generation is older.
    expect(await refusal(linkAccount(db, main, "github", "8812", fencing(8n, "operation-a", 1n)))).toEqual({
      statusCode: 409,
      errorCode: "fenced_token",
    });
    // An equal pair from another holder is still refused; from the same one it goes on.
    expect(await refusal(linkAccount(db, main, "github", "8812", fencing(7n, "operation-c", 2n)))).toEqual({
      statusCode: 409,
      errorCode: "fenced_token",
    });
    await linkAccount(db, main, "github", "8812", fencing(7n, "operation-b", 2n));
  });

  it("a provider that keeps the counter alone takes the older generation's higher fence over the newer one", async () => {
    await resetProviderState(db, seedProviderAccounts());
    const main = "google-oauth2|104423";
    const counterOnly = (fence: bigint, holder: string, generation: bigint) =>
      fencing(fence, holder, generation, false);
    await unlinkIdentity(db, main, "github", "8812", counterOnly(7n, "operation-b", 2n));
    // operation-a's lease was lost with the old primary, yet its write lands: 8 > 7.
    await linkAccount(db, main, "github", "8812", counterOnly(8n, "operation-a", 1n));
    // And the rightful holder is refused from then on.
    expect(await refusal(unlinkIdentity(db, main, "github", "8812", counterOnly(7n, "operation-b", 2n)))).toEqual({
      statusCode: 409,
      errorCode: "fenced_token",
    });
  });
});
