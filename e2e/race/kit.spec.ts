/** The kit's own tests, against a tiny checkout of their own (no app of the repository is needed). */
import { expect, type Page } from "@playwright/test";
import { startCheckout, type Checkout } from "./checkout-app.js";
import { doubleClick, expectEffects, expectOneWinner, test, type Release, type Send } from "./index.js";

let checkout: Checkout;
test.afterEach(() => checkout.close());

const pay = (page: Page) => page.getByRole("button", { name: "Pay" }).click();
const openAt = (query: string) => async (page: Page, actor: number) => {
  await page.goto(`${checkout.url}/?actor=${actor}${query}`);
};

test("the barrier holds every request until all actors sent theirs, so a racy server charges each of them", async ({
  race,
}) => {
  // The browser sends the released requests itself, so their spread is its own: a charge's pause must outlast it
  // for all three to be in flight at once (CI's loaded machine sent the third after the first's 150 ms was over).
  checkout = await startCheckout({ pauseMs: 2_000 });
  const result = await race({ actors: 3, open: openAt(""), act: pay, hold: "**/pay*" });

  expect(checkout.arrivals).toHaveLength(3);
  expect(checkout.maxInFlight()).toBe(3);
  expect(result.answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
  await expect(expectEffects(checkout.charges, 1, result)).rejects.toThrow(
    /expected the effect 1 time\(s\), counted 3/,
  );
});

test("without the barrier the same racy server looks safe: the first payment was over before the second began", async ({
  context,
}) => {
  checkout = await startCheckout();
  const [first, second] = [await context.newPage(), await context.newPage()];
  await openAt("")(first, 0);
  await openAt("")(second, 1);

  await Promise.all([first.waitForResponse("**/pay*"), pay(first)]);
  await Promise.all([second.waitForResponse("**/pay*"), pay(second)]);

  expect(checkout.charges()).toBe(1);
  await expect(second.getByRole("status")).toHaveText("Refused (409)");
});

test("a server that claims the order atomically: one winner, the rest refused, one charge, and each page says so", async ({
  race,
}) => {
  checkout = await startCheckout({ safe: true });
  const result = await race({ actors: 3, open: openAt(""), act: pay, hold: "**/pay*" });

  expectOneWinner(result, { winner: [200], losers: [409] });
  await expectEffects(checkout.charges, 1, result);
  const winner = result.answers.find((answer) => answer.status === 200)!.actor;
  for (const [actor, page] of result.pages.entries())
    await expect(page.getByRole("status")).toHaveText(actor === winner ? "Paid" : "Refused (409)");
});

const orders: { release: Release; letGo: number[]; arrive?: number[] }[] = [
  { release: "together", letGo: [0, 1, 2] },
  { release: "in-order", letGo: [0, 1, 2] },
  { release: "reversed", letGo: [2, 1, 0] },
  // Far enough apart that the server sees them in that order too, on a loaded machine: 200 ms apart, a browser
  // under the full suite on 2 cores once sent the third before the second.
  { release: { staggerMs: [0, 1_000, 2_000] }, letGo: [0, 1, 2], arrive: [0, 1, 2] },
  { release: { staggerMs: [2_000, 1_000, 0] }, letGo: [2, 1, 0], arrive: [2, 1, 0] },
];
for (const { release, letGo, arrive } of orders) {
  test(`release ${JSON.stringify(release)} lets the requests go as ${letGo.join(", ")}`, async ({ race }) => {
    checkout = await startCheckout({ safe: true });
    const result = await race({ actors: 3, open: openAt(""), act: pay, hold: "**/pay*", release });

    expect(result.releaseOrder).toEqual(letGo);
    expect(checkout.arrivals).toHaveLength(3);
    if (arrive) expect(checkout.arrivals.map((arrival) => arrival.actor)).toEqual(arrive);
    expectOneWinner(result, { winner: [200], losers: [409] });
  });
}

const arrivedAt = async () => checkout.arrivals.map((arrival) => arrival.at);
const spreadOfArrivals = () =>
  Math.max(...checkout.arrivals.map((arrival) => arrival.at)) -
  Math.min(...checkout.arrivals.map((arrival) => arrival.at));

test("the browser sends by default: the story gives the spread of its own send times and the server's arrivals", async ({
  race,
}) => {
  checkout = await startCheckout({ safe: true });
  const result = await race({ actors: 3, open: openAt(""), act: pay, hold: "**/pay*", arrivals: arrivedAt });

  expect(result.send).toBe("browser");
  expect(result.spread.acknowledged).toBeNull();
  expect(checkout.arrivals.map((arrival) => arrival.httpVersion)).toEqual(["1.1", "1.1", "1.1"]);
  expect(result.spread.sendMs).toBeGreaterThanOrEqual(0);
  expect(result.spread.arrivalMs).toBeCloseTo(spreadOfArrivals(), 6);
  expect(result.story).toMatch(
    /\nsent by the browser: it began sending them within [\d.]+ (ms|µs) \(its own timing\); the server saw them arrive within [\d.]+ (ms|µs) \(3 arrival times reported\)\n/,
  );
});

// The kit's own sending: the browser's requests, cookies and all, over the kit's connections, each page then
// handed its answer. Over `h2` the checkout speaks TLS: last-byte's connections speak HTTP/1.1 in it.
const kitSends = [
  { send: "last-byte", protocol: "http/1.1", httpVersion: "1.1", connections: 3, safeToo: true },
  { send: "last-byte", protocol: "h2", httpVersion: "1.1", connections: 3, safeToo: false },
  { send: "single-packet", protocol: "h2", httpVersion: "2.0", connections: 1, safeToo: true },
  { send: "single-packet", protocol: "h2c", httpVersion: "2.0", connections: 1, safeToo: false },
] as const;
const stories: Record<Exclude<Send, "browser">, RegExp> = {
  "last-byte":
    /\nsent last-byte over 3 HTTP\/1\.1 connections, 3 of whose heads the server acknowledged with 100 Continue first: every last byte written within [\d.]+ (ms|µs); /,
  "single-packet":
    /\nsent single-packet over one HTTP\/2 connection, once the server acknowledged a PING: every final frame queued within [\d.]+ (ms|µs), then written together; /,
};
for (const { send, protocol, httpVersion, connections, safeToo } of kitSends) {
  const over = `${connections === 1 ? "one connection" : "a connection each"}, to a checkout speaking ${protocol}`;
  const ignoreHTTPSErrors = protocol === "h2";
  test(`send "${send}" sends the browser's requests over ${over}: a racy server charges every one, each page shows its answer`, async ({
    race,
  }) => {
    checkout = await startCheckout({ protocol });
    const result = await race({
      actors: 3,
      open: openAt(""),
      act: pay,
      hold: "**/pay*",
      send,
      arrivals: arrivedAt,
      contextOptions: { ignoreHTTPSErrors },
    });

    expect(result.send).toBe(send);
    expect(checkout.arrivals.map((arrival) => arrival.httpVersion)).toEqual([httpVersion, httpVersion, httpVersion]);
    expect(new Set(checkout.arrivals.map((arrival) => arrival.connection)).size).toBe(connections);
    // Each actor's own cookies went with its request.
    expect(new Set(checkout.arrivals.map((arrival) => arrival.shopper)).size).toBe(3);
    expect(checkout.maxInFlight()).toBe(3);
    await expectEffects(checkout.charges, 3, result);
    for (const page of result.pages) await expect(page.getByRole("status")).toHaveText("Paid");
    expect(result.spread.sendMs).toBeGreaterThanOrEqual(0);
    expect(result.spread.arrivalMs).toBeCloseTo(spreadOfArrivals(), 6);
    expect(result.story).toMatch(stories[send]);
    expect(result.spread.acknowledged).toBe(3);
    // The server acknowledged every head (100 Continue, or the PING after them) before the final bytes went:
    // every request had begun before any was whole.
    expect(checkout.arrivals.map((arrival) => arrival.begun)).toEqual([3, 3, 3]);
  });

  if (safeToo)
    test(`send "${send}" to a checkout speaking ${protocol} that claims the order atomically: one winner, and each page says so`, async ({
      race,
    }) => {
      checkout = await startCheckout({ safe: true, protocol });
      const result = await race({
        actors: 3,
        open: openAt(""),
        act: pay,
        hold: "**/pay*",
        send,
        contextOptions: { ignoreHTTPSErrors },
      });

      expectOneWinner(result, { winner: [200], losers: [409] });
      await expectEffects(checkout.charges, 1, result);
      const winner = result.answers.find((answer) => answer.status === 200)!.actor;
      for (const [actor, page] of result.pages.entries())
        await expect(page.getByRole("status")).toHaveText(actor === winner ? "Paid" : "Refused (409)");
      expect(result.story).toMatch(
        /; arrival spread not reported \(the race's `arrivals` option reads it from the server\)\n/,
      );
    });
}

test("single-packet to a server without HTTP/2 fails the race, says why, and nothing reaches the server", async ({
  race,
}) => {
  checkout = await startCheckout();
  const attempt = race({ actors: 2, open: openAt(""), act: pay, hold: "**/pay*", send: "single-packet" });

  await expect(attempt).rejects.toThrow(
    /^race: single-packet: http:\/\/127\.0\.0\.1:\d+ does not speak HTTP\/2 to the kit \(.+\)\n(.|\n)*actor 0: no answer/,
  );
  expect(checkout.arrivals).toHaveLength(0);
});

for (const [send, release] of [
  ["last-byte", "in-order"],
  ["single-packet", { staggerMs: [0, 100] }],
] as [Send, Release][])
  test(`send "${send}" takes no release but "together" (${JSON.stringify(release)} is refused before anything opens)`, async ({
    race,
  }) => {
    checkout = await startCheckout();
    await expect(race({ actors: 2, open: openAt(""), act: pay, hold: "**/pay*", send, release })).rejects.toThrow(
      /^race: send "[a-z-]+" sends every request at once: it takes release "together", not /,
    );
    expect(checkout.arrivals).toHaveLength(0);
  });

test("tabs share one browser context (one cookie jar); contexts do not", async ({ race }) => {
  checkout = await startCheckout({ safe: true });
  await race({ actors: 3, mode: "tabs", open: openAt(""), act: pay, hold: "**/pay*" });
  expect(new Set(checkout.arrivals.map((arrival) => arrival.shopper)).size).toBe(1);

  checkout.arrivals.length = 0;
  await race({ actors: 3, mode: "contexts", open: openAt(""), act: pay, hold: "**/pay*" });
  expect(new Set(checkout.arrivals.map((arrival) => arrival.shopper)).size).toBe(3);
});

test("a failed expectation says which actor got what, in what order they were let go, and where the trace is", async ({
  race,
}) => {
  // Both must win: a charge's pause longer than the browser's spread in sending two released requests (a
  // loaded machine's clean clone sent them 494 ms apart, past the default 150 ms pause, and one was refused).
  checkout = await startCheckout({ pauseMs: 2_000 });
  const result = await race({ actors: 2, open: openAt(""), act: pay, hold: "**/pay*", release: "reversed" });

  expect(() => expectOneWinner(result, { winner: [200], losers: [409] })).toThrow(
    new RegExp(
      [
        "expected exactly one winner \\(200\\) and 1 losers \\(409\\); got 2 winner\\(s\\) \\(actor 0, actor 1\\)",
        "released reversed; order let go: actor 1, actor 0",
        '  actor 0: 200 \\(POST /pay; held at [-+]\\d+ ms, released at \\+\\d+ ms, answered at \\+\\d+ ms\\) \\{"paid":true\\}',
        "  actor 1: 200 ",
        "trace \\(use.trace '[a-z-]+'\\): .*trace.zip; open it with: npx playwright show-trace ",
      ].join("(.|\\n)*"),
    ),
  );
});

test("an actor that never sends the held request fails the race by its number; the held ones never reach the server", async ({
  race,
}) => {
  checkout = await startCheckout();
  const attempt = race({
    actors: 2,
    open: openAt(""),
    act: (page, actor) => (actor === 0 ? pay(page) : Promise.resolve()),
    hold: "**/pay*",
    barrierTimeoutMs: 5_000,
  });

  await expect(attempt).rejects.toThrow(
    new RegExp(
      /not every actor sent a matching request within 5000 ms\nactors that sent no held request: 1\n/.source +
        /(.|\n)*actor 0: no answer \(held, never released\)/.source,
    ),
  );
  expect(checkout.arrivals).toHaveLength(0);
});

for (const guard of ["off", "on"] as const) {
  test(
    "doubleClick sends two clicks in one task: the server gets " +
      `${guard === "off" ? "two requests" : "one"} with the button's guard ${guard}`,
    async ({ page }) => {
      checkout = await startCheckout({ safe: true });
      await page.goto(`${checkout.url}/?actor=0&guard=${guard}`);

      await doubleClick(page.getByRole("button", { name: "Pay" }));

      const expected = guard === "off" ? 2 : 1;
      await expect(page.locator("#answer")).toHaveAttribute("data-answered", String(expected));
      expect(checkout.arrivals).toHaveLength(expected);
    },
  );
}
