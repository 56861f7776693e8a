"use client";

import Link from "next/link";
import { inCourseOrder, useExperiments } from "../learn/useExperiments";
import type { ListedExperiment } from "../learn/types";
import { CourseContents, lessonHref } from "./CourseContents";
import { Lesson } from "./Lesson";

/** The lessons before and after this one, as links. */
export function LessonLinks({
  lessons,
  index,
  view = "course",
}: {
  lessons: ListedExperiment[];
  index: number;
  view?: "course" | "presenter";
}) {
  const previous = lessons[index - 1];
  const next = lessons[index + 1];
  return (
    <nav className="lesson-links" aria-label="Lessons before and after">
      {previous && (
        <Link href={lessonHref(previous.id, view)} rel="prev">
          ◀ Previous lesson: {previous.title}
        </Link>
      )}
      {next && (
        <Link href={lessonHref(next.id, view)} rel="next">
          Next lesson: {next.title} ▶
        </Link>
      )}
    </nav>
  );
}

/** `/learn/course`: the guided class, its table of contents with progress, then one lesson at a time. */
export function CourseView({ lessonId }: { lessonId: string | null }) {
  const cards = useExperiments();
  const lessons = inCourseOrder(cards.data?.experiments ?? []);
  const index = Math.max(
    0,
    lessons.findIndex((card) => card.id === lessonId),
  );
  const current = lessons[index];
  return (
    <main className="course">
      <header className="masthead">
        <div>
          <h1>The course</h1>
          <p className="tagline">
            The lease lock in a 45-minute class: predict, run, step through the facts, one lesson at a time.{" "}
            <Link href="/learn">All the cards</Link> ·{" "}
            <Link href={lessonHref(current?.id ?? "", "presenter")}>Presenter view</Link> ·{" "}
            <Link href="/learn/course/handout">The handout (print)</Link>
          </p>
        </div>
      </header>
      {cards.isPending && <p>Loading…</p>}
      {cards.error && <p role="alert">The lessons could not be loaded: {cards.error.message}</p>}
      {current && (
        <div className="course-layout">
          <p className="course-jump">
            Lesson {index + 1} of {lessons.length} · <a href="#contents">Contents</a>
          </p>
          <div className="card lesson-card">
            <Lesson key={current.id} card={current} place={{ position: index + 1, count: lessons.length }} />
            <LessonLinks lessons={lessons} index={index} />
          </div>
          <CourseContents lessons={lessons} current={current.id} />
        </div>
      )}
    </main>
  );
}
