"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useRef } from "react";
import type { ReplayHandle } from "../learn/RunReplay";
import { inCourseOrder, useExperiments } from "../learn/useExperiments";
import { lessonHref } from "./CourseContents";
import { LessonLinks } from "./CourseView";
import { Lesson } from "./Lesson";

/** Keys a control keeps for itself: a field's (a slider's or a radio group's arrows), the timeline's, a button's space. */
const ownsKey = (target: EventTarget | null, key: string) =>
  target instanceof Element &&
  (target.closest("input, select, textarea, [role=group][tabindex]") !== null ||
    (key === " " && target.closest("button, a, summary") !== null));

/**
 * Next and previous from the keyboard (a clicker's PageDown and PageUp too): the next fact of the replay
 * shown, else the next lesson; the same backwards.
 */
function usePresenterKeys(replay: React.RefObject<ReplayHandle | null>, next: string | null, previous: string | null) {
  const router = useRouter();
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.altKey || event.ctrlKey || event.metaKey || ownsKey(event.target, event.key)) return;
      const forward = ["ArrowRight", "PageDown", " "].includes(event.key);
      const back = ["ArrowLeft", "PageUp"].includes(event.key);
      if (!forward && !back) return;
      event.preventDefault();
      const stepped = forward ? replay.current?.nextFact() : replay.current?.previousFact();
      const lesson = forward ? next : previous;
      if (!stepped && lesson) router.push(lessonHref(lesson, "presenter"));
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [replay, next, previous, router]);
}

/** `/learn/course/presenter`: one lesson per screen in large type, for the room, stepped from the keyboard. */
export function PresenterView({ lessonId }: { lessonId: string | null }) {
  const cards = useExperiments();
  const lessons = inCourseOrder(cards.data?.experiments ?? []);
  const index = Math.max(
    0,
    lessons.findIndex((card) => card.id === lessonId),
  );
  const current = lessons[index];
  const replay = useRef<ReplayHandle>(null);
  usePresenterKeys(replay, lessons[index + 1]?.id ?? null, lessons[index - 1]?.id ?? null);
  return (
    <main className="presenter">
      <header className="presenter-bar">
        <h1>The course, for the room</h1>
        <p className="hint">
          → or Page Down: the next fact, then the next lesson; ← or Page Up: back.{" "}
          {current && <Link href={lessonHref(current.id)}>Leave the presenter view</Link>}
        </p>
      </header>
      {cards.error && <p role="alert">The lessons could not be loaded: {cards.error.message}</p>}
      {current && (
        <>
          <Lesson
            key={current.id}
            card={current}
            place={{ position: index + 1, count: lessons.length }}
            replay={replay}
          />
          <LessonLinks lessons={lessons} index={index} view="presenter" />
        </>
      )}
    </main>
  );
}
