import { expect, test, type Page } from "@playwright/test";
import { classroomViewports, identityRow, readLab, resetLab, signInAs } from "./lab";

/** Two correct switches under `lease`, the second sent as soon as the first answered. */
async function switchTwiceBackToBack(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
  await expect(identityRow(page, "github|8812").getByText("Switched: now primary")).toBeVisible();
  await page.getByRole("button", { name: "Make primary for Email · ada@analytical.test" }).click();
  await expect(identityRow(page, "auth0|ada-email").getByText("Switched: now primary")).toBeVisible();
}

const auditSection = (page: Page) => page.locator('section[aria-labelledby="audit-heading"]');

for (const viewport of classroomViewports) {
  test.describe(`at ${viewport.width} px`, () => {
    test.use({ viewport });

    test.beforeEach(async ({ request }) => {
      await resetLab(request, { strategy: "lease", provider: { latencyMs: 300 } });
    });

    test("after two back-to-back switches, no two lease bands overlap in time", async ({ page }) => {
      await signInAs(page, "Ada Lovelace");
      await switchTwiceBackToBack(page);

      const bands = page.locator("svg rect.tl-lease");
      await expect(bands).toHaveCount(2);
      // Both drawn up to their release, which came long before their 10 s TTL.
      await expect(page.locator('svg rect.tl-lease[data-lease-end="released"]')).toHaveCount(2);
      const drawn = await bands.evaluateAll((all) =>
        all.map((band) => {
          const box = band.getBoundingClientRect();
          return {
            from: Date.parse(band.getAttribute("data-lease-from")!),
            until: Date.parse(band.getAttribute("data-lease-until")!),
            left: box.left,
            right: box.right,
          };
        }),
      );
      drawn.sort((a, b) => a.from - b.from);
      const [first, second] = drawn as [(typeof drawn)[0], (typeof drawn)[0]];
      expect(first.until).toBeGreaterThan(first.from);
      expect(first.until).toBeLessThanOrEqual(second.from);
      // And as drawn: the first band ends where the second begins, or before (a pixel of rounding allowed).
      expect(first.right).toBeLessThanOrEqual(second.left + 1);
      await expect(page.getByTestId("guard-banner")).toContainText("Lease free");
    });

    test("a lease kept for an unknown outcome is drawn to its expiry and says why; the audit settles calmly", async ({
      page,
      request,
    }) => {
      await request.put("/api/lab", {
        // The deadline fires a safety margin (TTL / 5) before the lease can expire: the keep must land in it,
        // so the TTL leaves it 600 ms on a busy machine, and the steps before the unlink 2.4 s.
        // The apply limit, past the hold cap (3 × TTL), keeps the lease kept and the audit settling long
        // enough to be seen however slow the steps before are.
        data: {
          leaseTtlMs: 3_000,
          provider: { latencyMs: 100, applyLimitMs: 12_000, script: { unlink: ["timeout"] } },
        },
      });
      await signInAs(page, "Ada Lovelace");
      await page.getByRole("button", { name: "Make primary for GitHub · @ada" }).click();
      // The deadline fires at the hold cap (3 × TTL), less the margin.
      await expect(identityRow(page, "github|8812").getByRole("alert")).toBeVisible({ timeout: 20_000 });

      const band = page.locator('svg rect.tl-lease[data-lease-end="kept"]');
      await expect(band).toHaveCount(1);
      const { operations } = await readLab(request, "/api/lab/timeline?userId=ada");
      expect(operations[0].lease.releasedAt).toBeNull();
      expect(await band.getAttribute("data-lease-until")).toBe(operations[0].lease.expiresAt);
      await expect(page.locator("svg g[data-operation-id]")).toContainText("lease kept until");
      // While the unlink may still land and the switch's journal entry waits for its repair, the audit is
      // settling (nobody knows until when: the repair's moment is the reconciler's), not red; then it settles.
      const audit = auditSection(page);
      await expect(audit.getByTestId("audit-verdict")).toHaveText(/^Settling/);
      await expect(audit.getByText(/^ada: settling$/)).toBeVisible();
      await expect(audit.locator(".verdict.bad")).toHaveCount(0);
      await expect(audit.getByTestId("audit-verdict")).toHaveText(/^Consistent/, { timeout: 25_000 });
      // The reconciler then closes the switch's journal entry: a lane of its own, switching nothing.
      await expect
        .poll(
          async () => {
            const timeline = await readLab(request, "/api/lab/timeline?userId=ada");
            return timeline.operations.filter(
              (lane: { toIdentityId: string | null; status: number | null }) =>
                lane.toIdentityId === null && lane.status === 200,
            ).length;
          },
          { timeout: 15_000 },
        )
        .toBe(1);
    });

    test("during correct switches, the audit is never red and never an alert: it settles", async ({ page }) => {
      await signInAs(page, "Ada Lovelace");
      await expect(auditSection(page).getByTestId("audit-verdict")).toHaveText(/^Consistent/);
      // Every state the audit panel passes through, as the page renders it.
      await auditSection(page).evaluate((section) => {
        const seen: { red: boolean; alert: boolean; text: string }[] = [];
        const note = () =>
          seen.push({
            red: section.querySelector(".verdict.bad") !== null,
            alert: section.querySelector('[role="alert"]') !== null || section.getAttribute("role") === "alert",
            text: section.textContent ?? "",
          });
        note();
        new MutationObserver(note).observe(section, {
          subtree: true,
          childList: true,
          characterData: true,
          attributes: true,
        });
        (window as unknown as { auditSeen: typeof seen }).auditSeen = seen;
      });

      await switchTwiceBackToBack(page);
      await expect(auditSection(page).getByTestId("audit-verdict")).toHaveText(/^Consistent/, { timeout: 15_000 });

      const seen = await page.evaluate(
        () => (window as unknown as { auditSeen: { red: boolean; alert: boolean; text: string }[] }).auditSeen,
      );
      expect(seen.filter((state) => state.red || state.alert)).toEqual([]);
      // It did follow the switches: it said it was settling, with a bound, while they ran.
      expect(seen.some((state) => /Settling/.test(state.text) && /settling until \d/.test(state.text))).toBe(true);
    });
  });
}
