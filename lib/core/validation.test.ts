import { describe, expect, it } from "vitest";
import { z } from "zod";
import { nestedAtMost, parseOrThrow } from "./validation";

const nested = (depth: number): unknown => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);

describe("nestedAtMost", () => {
  const schema = nestedAtMost(3).pipe(z.array(z.unknown()));

  it("takes JSON as deep as the bound, scalars and empty containers included", () => {
    expect(parseOrThrow(schema, nested(3))).toEqual(nested(3));
    expect(parseOrThrow(schema, [1, { a: [2] }])).toEqual([1, { a: [2] }]);
    expect(nestedAtMost(0).safeParse("text").success).toBe(true);
  });

  it("refuses one level more, in an object or an array, before the schema after it looks", () => {
    for (const value of [nested(4), [{ a: { b: [] } }], { a: [[[1]]] }]) {
      const result = schema.safeParse(value);
      expect(result.error?.issues.map((issue) => issue.message)).toEqual([
        "must nest arrays and objects at most 3 deep",
      ]);
    }
  });

  it("counts 100,000 levels without overflowing the stack (JSON.stringify does at about 5,000)", () => {
    expect(nestedAtMost(64).safeParse(nested(100_000)).success).toBe(false);
  });
});
