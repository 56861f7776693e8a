/**
 * The race kit on the lab: switches of one user's primary identity, each from its own device (a browser
 * context with a session of its own) or its own tab (one context, one session), held by the kit's barrier
 * and let go together, in order or reversed. Each actor makes a different identity primary, so every
 * switch has work to do at the provider.
 */
import { expect, type APIRequestContext } from "@playwright/test";
import { identityRow, resetLab, switchRequests } from "../lab";
import {
  expectEffects,
  expectOneWinner,
  expectOnlyAnswers,
  test,
  type Race,
  type RaceResult,
  type Release,
} from "@lease-lock-lab/race";
import {
  adaSwitchers,
  auditOf,
  contiguousOperations,
  graceSwitcher,
  linkedUnder,
  makePrimary,
  openIdentities,
  operationsThatWrote,
  providerCalls,
  sendSwitch,
  signIn,
  unlinkedFrom,
  withCalls,
  type Switcher,
} from "./switchers";

type Strategy = "none" | "lease" | "transaction";

test.beforeEach(async ({ request }) => {
  // No background reconciliation: the audit shows what the race left, not what was repaired after it.
  await resetLab(request, { reconcileAfterMs: null });
});

/**
 * Each actor's request, from a page of the app's origin. `clicked`: from the real page and its button;
 * otherwise `fetch` from a page that runs none of the app's code (the same request, and cheap enough to
 * repeat three devices at a time).
 */
function raceSwitches(
  race: Race,
  switchers: Switcher[],
  { mode, release, clicked }: { mode: "contexts" | "tabs"; release: Release; clicked: boolean },
): Promise<RaceResult> {
  return race({
    actors: switchers.length,
    mode,
    // Tabs share one cookie jar: whichever tab signs in last, all of them send that one session.
    open: async (page, actor) => {
      await signIn(page, switchers[actor]!.userId);
      if (clicked) await openIdentities(page, switchers[actor]!);
      else await page.goto("/api/session");
    },
    act: (page, actor) => (clicked ? makePrimary(page, switchers[actor]!) : sendSwitch(page, switchers[actor]!)),
    hold: switchRequests,
    release,
  });
}

/**
 * Unguarded switches corrupt only when they overlap: every unlink must land before the first link. On 2 cores
 * running three apps and three browsers, a request released 16 ms after another was seen to reach the provider
 * 1.3 s later, so 800 ms calls let 3 in 30 races under `none` end consistent: 2 s calls keep them overlapping.
 * The lease's losers must arrive while the winner holds it (two calls), so 2 s calls there too; a transaction
 * serialises whatever the latency, so its races may be quicker.
 */
const latencyMs: Record<Strategy, number> = { none: 2_000, lease: 2_000, transaction: 300 };

const setStrategy = async (request: APIRequestContext, strategy: Strategy) =>
  expect(
    (await request.put("/api/lab", { data: { strategy, provider: { latencyMs: latencyMs[strategy] } } })).status(),
  ).toBe(200);

/** What each strategy must make of a race of `switchers`, from the answers, the provider and the audit. */
async function expectOutcome(strategy: Strategy, result: RaceResult, request: APIRequestContext) {
  const actors = result.answers.length;
  const audit = await auditOf(request, "ada");
  const story = await withCalls(result, request);
  if (strategy === "none") {
    // Unguarded, every switch unlinks from the same old primary: the provider ends up corrupted, and the
    // kit's assertions say so.
    expect(audit.consistent, story).toBe(false);
    expect(() => expectOneWinner(result, { winner: [200], losers: [409] })).toThrow(/failed/);
    await expect(expectEffects(() => operationsThatWrote(request), 1, result)).rejects.toThrow(/counted [2-9]/);
  }
  if (strategy === "lease") {
    expectOneWinner(result, { winner: [200], losers: [409] });
    for (const loser of result.answers.filter((answer) => answer.status === 409))
      expect((loser.body as { type: string }).type, story).toMatch(/\/operation-in-progress$/);
    await expectEffects(() => operationsThatWrote(request), 1, result);
    expect(audit.consistent, story).toBe(true);
  }
  if (strategy === "transaction") {
    // Each waits for the row lock, then switches from what the one before it left: all win, one at a time.
    expectOnlyAnswers(result, [200]);
    await expectEffects(() => operationsThatWrote(request), actors, result);
    // No call of one switch between two of another's, and each unlinks from the account the one before it
    // linked under: the primary it left.
    const blocks = contiguousOperations(await providerCalls(request));
    expect(blocks, `${story}\nthe switches' provider calls interleave`).not.toBeNull();
    for (const [index, block] of blocks!.entries())
      if (index > 0) expect(unlinkedFrom(block), story).toBe(linkedUnder(blocks![index - 1]!));
    expect(audit.consistent, story).toBe(true);
  }
}

const strategies = ["none", "lease", "transaction"] as const;
const orders: Release[] = ["together", "in-order", "reversed"];

for (const strategy of strategies) {
  for (const release of orders) {
    test(`${strategy}: three devices of one user, released ${release}`, async ({ race, request }) => {
      await setStrategy(request, strategy);
      const result = await raceSwitches(race, adaSwitchers, { mode: "contexts", release, clicked: false });
      await expectOutcome(strategy, result, request);
    });
  }
}

// Each strategy with a release order of its own, clicked in two tabs of the real page: what each tab shows.
const tabs = { none: "together", lease: "in-order", transaction: "reversed" } as const;
for (const strategy of strategies) {
  test(`${strategy}: two tabs of one user click Make primary, released ${tabs[strategy]}`, async ({
    race,
    request,
  }) => {
    await setStrategy(request, strategy);
    const switchers = adaSwitchers.slice(0, 2);
    const result = await raceSwitches(race, switchers, { mode: "tabs", release: tabs[strategy], clicked: true });
    await expectOutcome(strategy, result, request);

    const switched = result.answers.filter((answer) => answer.status === 200).length;
    for (const [actor, page] of result.pages.entries()) {
      const attempt = page.locator(`li[data-identity-id="${switchers[actor]!.identityId}"] .outcome`).last();
      const status = result.answers[actor]!.status;
      // Two switches one after the other (a transaction): the first tab's answer is cleared once it reads the
      // second, as a stale answer is; it is never anything else.
      if (status === 200 && switched > 1)
        await expect
          .poll(async () => (await attempt.count()) === 0 || /^Switched: now primary/.test(await attempt.innerText()))
          .toBe(true);
      else if (status === 200) await expect(attempt).toHaveText(/^Switched: now primary/);
      else if (status === 409) await expect(attempt).toHaveText("Another operation is already in progress");
      else await expect(attempt).toHaveText(/^The provider failed the (unlink|link) step/);
    }
    if (strategy !== "lease") return;
    // The losing tab learns the outcome by itself once the winner's operation ends: the new primary, the
    // lease free, the audit consistent.
    const winner = switchers[result.answers.find((answer) => answer.status === 200)!.actor]!;
    const loser = result.pages[result.answers.find((answer) => answer.status === 409)!.actor]!;
    await expect(identityRow(loser, winner.identityId).getByText("Primary", { exact: true })).toBeVisible();
    await expect(loser.getByText(/^Lease free/)).toBeVisible();
    await expect(loser.getByTestId("audit-verdict")).toHaveText(/^Consistent/);
  });
}

test("lease: two users racing in their own contexts do not contend: the lease is per user", async ({
  race,
  request,
}) => {
  const result = await raceSwitches(race, [adaSwitchers[0]!, graceSwitcher], {
    mode: "contexts",
    release: "together",
    clicked: false,
  });

  expectOnlyAnswers(result, [200]);
  await expectEffects(() => operationsThatWrote(request), 2, result);
  expect((await auditOf(request, "ada")).consistent).toBe(true);
  expect((await auditOf(request, "grace")).consistent).toBe(true);
});
