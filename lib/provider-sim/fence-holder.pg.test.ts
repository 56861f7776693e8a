import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDb } from "../../db/connection";
import { seedProviderAccounts } from "../../db/seed-data";
import type { IdpDatabase } from "./schema";
import { getAccount, IdpError, linkAccount, resetProviderState, unlinkIdentity } from "./store";

// After an asynchronous replica is promoted, the lease's database can issue a fence again: two holders
// carry the same number. The provider, enforcing fencing, lets the first holder of a fence go on and refuses
// the same fence from another holder.
const { db } = createDb<IdpDatabase>(inject("databaseUrl"), 2);
const fencing = (fence: bigint, holder: string | null) => ({ fence, holder, enforce: true });
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
});
