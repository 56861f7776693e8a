import { writeFileSync } from "node:fs";
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { classroomViewports, expectNoSidewaysScroll, resetLab, seriousViolations } from "./lab";
import { expectWholeRun, runIn, savedRunOf, stepEveryFact } from "./learn-cards";

interface Lesson {
  id: string;
  title: string;
  available: boolean;
  lesson: number;
  prediction: { prompt: string; choices: { id: string; text: string }[]; answer: string };
}

/** The lessons in the course's order, as the page reads them. */
async function lessonsOf(request: APIRequestContext): Promise<Lesson[]> {
  const { experiments } = await (await request.get("/api/lab/experiments")).json();
  return (experiments as Lesson[]).sort((a, b) => a.lesson - b.lesson);
}

/** The lesson's shipped run, as the course reads it (a committed file, served as it is). */
async function shippedRun(request: APIRequestContext, id: string) {
  const answer = await request.get(`/course/runs/${id}.json`);
  expect(answer.status(), `no shipped run for ${id}`).toBe(200);
  return answer.json();
}

/**
 * One lesson: "Expected" hidden until the prediction is made, then shown; Run (`live`, where this app can run
 * it: the e2e apps run without PgBouncer and Redis) and its whole run drawn beside the prediction; then its
 * shipped run, stepped fact by fact back and forth; the takeaway; axe and the width checked on the way.
 */
async function walkLesson(page: Page, lesson: Lesson, predicted: string, live: boolean) {
  const article = page.locator(`article[data-lesson="${lesson.id}"]`);
  await expect(article.getByRole("heading", { level: 2, name: lesson.title })).toBeVisible();
  const expected = article.locator(".expected");
  await expect(expected).not.toContainText("Expected:");
  const choice = lesson.prediction.choices.find((each) => each.id === predicted)!;
  await article.getByRole("radio", { name: choice.text }).check();
  await expect(expected).toContainText("Expected:");

  if (lesson.available && live) {
    await runIn(page, article);
    const { run, href } = await savedRunOf(page, article);
    // The prediction travels in the run's link, and is said beside what was measured.
    expect(href).toContain(`?predicted=${predicted}`);
    await expect(article.locator(".prediction-verdict")).toContainText(`You predicted “${choice.text}”`);
    await expectWholeRun(article, run);
  } else if (!lesson.available) {
    await expect(article.getByRole("button", { name: "Run (not available here)" })).toHaveAttribute(
      "aria-disabled",
      "true",
    );
  }

  await article.getByRole("button", { name: "Open the shipped run" }).click();
  await expect(article.locator(`[data-shipped-run="${lesson.id}"]`)).toBeVisible();
  await expect(article.locator(".prediction-verdict")).toContainText(`You predicted “${choice.text}”`);
  const shipped = await shippedRun(page.request, lesson.id);
  await expectWholeRun(article, shipped);
  await stepEveryFact(article, shipped);
  await expect(article.getByRole("heading", { name: "Takeaway" })).toBeVisible();
  await expectNoSidewaysScroll(page);
  expect(await seriousViolations(page)).toEqual([]);
}

// The course in three parts that run side by side, each from its first lesson to the next part's first
// through "Next lesson", on both of the class's screens. Each lesson runs live on the wide screen; on the
// phone the first lesson runs live too (a live run drawn narrow), the others open their shipped run only (the
// same replay, drawn narrow), which keeps the walk to minutes.
const parts = [
  { from: 1, to: 5 },
  { from: 6, to: 9 },
  { from: 10, to: Infinity },
];
for (const { width, height } of classroomViewports)
  for (const { from, to } of parts) {
    const wide = width > 1000;
    test(
      `at ${width} px, lessons ${from} to ${to === Infinity ? "the last" : to}: predict, ` +
        `${wide ? "run, " : from === 1 ? "run the first, " : ""}open the shipped run, step every fact both ways, next lesson`,
      async ({ page, request }) => {
        test.setTimeout(420_000);
        await resetLab(request);
        await page.setViewportSize({ width, height });
        const lessons = await lessonsOf(request);
        const part = lessons.filter((lesson) => lesson.lesson >= from && lesson.lesson <= to);
        await page.goto(`/learn/course?lesson=${part[0]!.id}`);
        await expect(page.getByRole("navigation", { name: "Contents" }).getByRole("link")).toHaveCount(lessons.length);
        for (const [index, lesson] of part.entries()) {
          // Right for some lessons, wrong for others: the verdict line says either.
          const { choices, answer } = lesson.prediction;
          const predicted = index % 2 === 0 ? answer : choices.find((each) => each.id !== answer)!.id;
          await walkLesson(page, lesson, predicted, wide || lesson.lesson === 1);
          const next = lessons[lesson.lesson];
          if (!next) {
            await expect(page.getByRole("link", { name: /^Next lesson/ })).toHaveCount(0);
            continue;
          }
          await page.getByRole("link", { name: `Next lesson: ${next.title} ▶` }).click();
          await expect(page).toHaveURL(new RegExp(`lesson=${next.id}$`));
          if (index === part.length - 1) break;
        }
      },
    );
  }

test("the table of contents shows each lesson's progress, kept in the browser", async ({ page, request }) => {
  await resetLab(request);
  const [first] = await lessonsOf(request);
  await page.goto("/learn/course");
  const contents = page.getByRole("navigation", { name: "Contents" });
  const entry = contents.getByRole("listitem").filter({ hasText: first!.title });
  await expect(entry).toContainText("not started");
  await expect(entry.getByRole("link")).toHaveAttribute("aria-current", "page");
  await page.getByRole("radio").first().check();
  await expect(entry).toContainText("predicted");
  await page.getByRole("button", { name: "Open the shipped run" }).click();
  await expect(entry).toContainText("done (shipped run)");
  await page.reload();
  await expect(page.getByRole("navigation", { name: "Contents" }).getByRole("listitem").first()).toContainText(
    "done (shipped run)",
  );
});

test("the presenter view: large type, and the keyboard steps the facts, then the lessons", async ({
  page,
  request,
}) => {
  await resetLab(request);
  const [first, second] = await lessonsOf(request);
  const shipped = await shippedRun(request, first!.id);
  await page.goto(`/learn/course/presenter?lesson=${first!.id}`);
  const article = page.locator(`article[data-lesson="${first!.id}"]`);
  expect(parseFloat(await article.evaluate((node) => getComputedStyle(node).fontSize))).toBeGreaterThanOrEqual(20);
  await article.getByRole("button", { name: "Open the shipped run" }).click();
  await expect(article.locator(".replay-fact")).toHaveText(`Fact ${shipped.steps.length} of ${shipped.steps.length}`);
  await page.locator("h1").click();
  await page.keyboard.press("PageUp");
  await expect(article.locator(".replay-fact")).toHaveText(
    `Fact ${shipped.steps.length - 1} of ${shipped.steps.length}`,
  );
  await page.keyboard.press("ArrowRight");
  await expect(article.locator(".replay-fact")).toHaveText(`Fact ${shipped.steps.length} of ${shipped.steps.length}`);
  // Past the last fact: the next lesson.
  await page.keyboard.press("ArrowRight");
  await expect(page).toHaveURL(new RegExp(`/learn/course/presenter\\?lesson=${second!.id}$`));
  await expect(page.locator(`article[data-lesson="${second!.id}"]`)).toBeVisible();
  await page.keyboard.press("PageUp");
  await expect(page).toHaveURL(new RegExp(`lesson=${first!.id}$`));
  expect(await seriousViolations(page)).toEqual([]);
});

test("the handout prints one lesson a page from the shipped runs, and the answer key on a page of its own", async ({
  page,
  request,
}, testInfo) => {
  test.setTimeout(120_000);
  const lessons = await lessonsOf(request);
  await page.goto("/learn/course/handout");
  await expect(page.locator(".handout-lesson[data-ready]")).toHaveCount(lessons.length);
  expect(await seriousViolations(page)).toEqual([]);
  // Each lesson starts a page and none runs over onto a second: as many pages as lessons, and one for the key.
  const pdf = await page.pdf({ format: "A4", printBackground: true, preferCSSPageSize: true });
  // Kept beside the test's results, to look at the pages (pdftoppm -png handout.pdf page).
  writeFileSync(testInfo.outputPath("handout.pdf"), pdf);
  const pages = pdf.toString("latin1").match(/\/Type\s*\/Page[^s]/g)?.length;
  expect(pages).toBe(lessons.length + 1);
});
