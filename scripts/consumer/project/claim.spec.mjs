// The installed race kit against the consumer's app: the racy claim is caught, the guarded one holds.
import { expect } from "@playwright/test";
import { expectEffects, expectOneWinner, test } from "@lease-lock-lab/race";

const ACTORS = 3;
const raceOn = (race, route) =>
  race({
    actors: ACTORS,
    open: (page) => page.goto(`/tickets?route=${route}`),
    act: (page) => page.getByRole("button", { name: "Claim" }).click(),
    hold: `**/${route}/claim`,
  });
const claims = async (request) => (await (await request.get("/claims")).json()).count;

test.beforeEach(async ({ request }) => {
  expect((await request.post("/reset")).status()).toBe(204);
});

test("the racy claim fails the kit's one-winner assertion: every actor got the one ticket", async ({
  race,
  request,
}) => {
  const result = await raceOn(race, "racy");
  expect(() => expectOneWinner(result, { winner: [200], losers: [409] })).toThrow(/expected exactly one winner/);
  expect(await claims(request)).toBeGreaterThan(1);
});

test("the claim guarded by the installed lease passes it: one winner, one claim", async ({ race, request }) => {
  const result = await raceOn(race, "guarded");
  expectOneWinner(result, { winner: [200], losers: [409] });
  await expectEffects(() => claims(request), 1, result);
});
