"use client";

import Link from "next/link";
import type { ListedExperiment } from "../learn/types";
import { progressWords, useLessonProgress } from "./progress";

export const lessonHref = (experimentId: string, view: "course" | "presenter" = "course") =>
  `/learn/course${view === "presenter" ? "/presenter" : ""}?lesson=${encodeURIComponent(experimentId)}`;

function Entry({ card, current }: { card: ListedExperiment; current: boolean }) {
  const progress = useLessonProgress(card.id);
  return (
    <li className={progress.done ? "done" : undefined}>
      <Link href={lessonHref(card.id)} aria-current={current ? "page" : undefined}>
        {card.title}
      </Link>{" "}
      <span className="hint">
        {card.minutes} min · {progressWords(progress)}
      </span>
    </li>
  );
}

/** The table of contents: the 45-minute class, then the lessons that go further, each with its progress. */
export function CourseContents({ lessons, current }: { lessons: ListedExperiment[]; current: string }) {
  const core = lessons.filter((card) => card.core);
  const further = lessons.filter((card) => !card.core);
  const minutes = core.reduce((sum, card) => sum + card.minutes, 0);
  return (
    <nav className="course-contents card" aria-labelledby="contents-heading" id="contents">
      <h2 id="contents-heading">Contents</h2>
      <h3>The class ({minutes} min)</h3>
      <ol>
        {core.map((card) => (
          <Entry key={card.id} card={card} current={card.id === current} />
        ))}
      </ol>
      {further.length > 0 && (
        <>
          <h3>Going further</h3>
          <ol start={core.length + 1}>
            {further.map((card) => (
              <Entry key={card.id} card={card} current={card.id === current} />
            ))}
          </ol>
        </>
      )}
    </nav>
  );
}
