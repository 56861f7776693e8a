import { createQueryId, RawNode, type CompiledQuery } from "kysely";
import { describe, expect, it } from "vitest";
import { bound, mergedValues, param } from "./statements.ts";

const template: CompiledQuery<unknown> = {
  sql: "UPDATE users SET name = $1 WHERE id = $2",
  query: RawNode.createWithSql("UPDATE users SET name = $1 WHERE id = $2"),
  parameters: [param("name"), param("id")],
  queryId: createQueryId(),
};

describe("bound", () => {
  it("sends each call's values where the statement's parameters are, the text unchanged", () => {
    const statement = bound(template, { id: "ada", name: "Ada" });
    expect(statement.sql).toBe(template.sql);
    expect(statement.parameters).toEqual(["Ada", "ada"]);
  });

  it("refuses a parameter without a value of its own, an inherited name included", () => {
    expect(() => bound(template, { name: "Ada" })).toThrow('no value for the statement\'s parameter "id"');
    const inherited = Object.create({ id: "ada" }) as Record<string, unknown>;
    inherited.name = "Ada";
    expect(() => bound(template, inherited)).toThrow('parameter "id"');
  });
});

describe("mergedValues", () => {
  it("joins the parts' values, a name two parts give with the same value once", () => {
    expect(mergedValues({ userId: "ada", identityId: "a1" }, undefined, { userId: "ada", token: "t" })).toEqual({
      userId: "ada",
      identityId: "a1",
      token: "t",
    });
  });

  it("refuses a name two parts give with different values: one part's condition would be checked against the other's", () => {
    expect(() => mergedValues({ userId: "ada" }, { userId: "alan" })).toThrow(
      'the statement\'s parameter "userId" was given two different values',
    );
  });
});
