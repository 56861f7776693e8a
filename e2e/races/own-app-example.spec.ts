// The worked example of e2e/races/README.md ("Test your own app for double submits"): keep the two in step.
import { expect } from "@playwright/test";
import { expectEffects, expectOneWinner, test } from "@lease-lock-lab/race";

test("two devices of one user switch at the same moment: one wins, the other is refused", async ({ race, request }) => {
  await request.post("/api/lab/reset");
  const buttons = ["Make primary for GitHub · @ada", "Make primary for Email · ada@analytical.test"];
  const result = await race({
    actors: 2, // each in its own browser context: a session of its own
    open: async (page, actor) => {
      await page.request.post("/api/session", { data: { userId: "ada" } });
      await page.goto("/");
      // Ready to click: the barrier's clock starts when the actors act.
      await expect(page.getByRole("button", { name: buttons[actor] })).toBeEnabled({ timeout: 15_000 });
    },
    act: (page, actor) => page.getByRole("button", { name: buttons[actor] }).click(),
    hold: "**/api/users/*/primary", // held until both are sent, then let go together
    release: "together",
  });

  expectOneWinner(result, { winner: [200], losers: [409] });
  // The effect: links made at the identity provider, from its call log (maxRetries: the server may have
  // closed the connection left idle through the race).
  const links = async () =>
    (await (await request.get("/api/lab/provider", { maxRetries: 1 })).json()).calls.filter(
      (call: { method: string; status: number }) => call.method === "POST" && call.status === 201,
    ).length;
  await expectEffects(links, 1, result);
});
