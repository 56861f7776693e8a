/** The kit's doubleClick on the lab's page, with its client guard (buttons disabled while a request is pending). */
import { expect, test, type APIRequestContext } from "@playwright/test";
import { identityRow, resetLab, signInAs } from "./lab";
import { doubleClick } from "@lease-lock-lab/race";

/** Switch requests the server received for Ada: every one has a lane, refused ones included. */
const adaLanes = async (request: APIRequestContext) =>
  ((await (await request.get("/api/lab/timeline?userId=ada", { maxRetries: 1 })).json()).operations as unknown[])
    .length;

const github = "Make primary for GitHub · @ada";
/** A switch is three 800 ms provider calls; a worker's first one also waits for its app to warm up. */
const answered = { timeout: 15_000 };

test("with the client guard off, doubleClick reaches the server twice: one switch, one 409", async ({
  page,
  request,
}) => {
  await resetLab(request);
  await signInAs(page, "Ada Lovelace");

  await doubleClick(page.getByRole("button", { name: github }));

  const row = identityRow(page, "github|8812");
  await expect(row.getByRole("alert")).toHaveText("Another operation is already in progress", answered);
  await expect(row.getByText("Switched: now primary")).toBeVisible(answered);
  expect(await adaLanes(request)).toBe(2);
});

test("the client guard stops Playwright's dblclick, not two clicks in one task: it disables on the next render", async ({
  page,
  request,
}) => {
  await resetLab(request, { clientGuard: true });
  await signInAs(page, "Ada Lovelace");

  await page.getByRole("button", { name: github }).dblclick();
  const row = identityRow(page, "github|8812");
  await expect(row.getByText("Switched: now primary")).toBeVisible(answered);
  expect(await adaLanes(request)).toBe(1);

  await doubleClick(page.getByRole("button", { name: "Make primary for Email · ada@analytical.test" }));
  const email = identityRow(page, "auth0|ada-email");
  await expect(email.getByRole("alert")).toHaveText("Another operation is already in progress", answered);
  await expect(email.getByText("Switched: now primary")).toBeVisible(answered);
  expect(await adaLanes(request)).toBe(3);
});
