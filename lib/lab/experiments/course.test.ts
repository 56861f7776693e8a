import { describe, expect, it } from "vitest";
import { corePath, furtherPath, lessons } from "./course";
import { experiments } from "./registry";

describe("the course", () => {
  it("gives every experiment a lesson with its minutes and a prediction of 2–4 answers, one of them right", () => {
    for (const { id } of experiments) {
      const lesson = lessons[id];
      expect(lesson, `no lesson for ${id} in course.ts`).toBeDefined();
      expect(lesson!.minutes).toBeGreaterThan(0);
      const ids = lesson!.prediction.choices.map((choice) => choice.id);
      expect(ids.length).toBeGreaterThanOrEqual(2);
      expect(ids.length).toBeLessThanOrEqual(4);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toContain(lesson!.prediction.answer);
    }
  });

  it("places every experiment in the teaching order, once, and its core path fits 45 minutes", () => {
    const order: string[] = [...corePath, ...furtherPath];
    expect(new Set(order).size).toBe(order.length);
    for (const { id } of experiments) expect(order, `${id} has no place in the course's order`).toContain(id);
    const minutes = corePath.reduce((sum, id) => sum + lessons[id]!.minutes, 0);
    expect(minutes).toBeLessThanOrEqual(45);
  });
});
