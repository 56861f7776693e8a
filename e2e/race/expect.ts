import type { RaceResult } from "./race.js";

/** Every answer is one of `allowed`, and none is a 5xx or missing. */
export function expectOnlyAnswers(race: RaceResult, allowed: number[]): void {
  const problems = race.answers.flatMap((answer) => {
    if (answer.status === 0) return [`actor ${answer.actor} got no answer (${answer.failure ?? "unknown"})`];
    if (answer.status >= 500) return [`actor ${answer.actor} got a ${answer.status}: the server failed`];
    if (!allowed.includes(answer.status))
      return [`actor ${answer.actor} got ${answer.status}, which is not one of ${allowed.join(", ")}`];
    return [];
  });
  fail("expectOnlyAnswers", problems, race);
}

/** Exactly one answer is a winner's status; every other is a loser's; no 5xx. */
export function expectOneWinner(race: RaceResult, statuses: { winner: number[]; losers: number[] }): void {
  expectOnlyAnswers(race, [...statuses.winner, ...statuses.losers]);
  const winners = race.answers.filter((answer) => statuses.winner.includes(answer.status));
  const losers = race.answers.filter(
    (answer) => !statuses.winner.includes(answer.status) && statuses.losers.includes(answer.status),
  );
  const problems =
    winners.length === 1 && losers.length === race.answers.length - 1
      ? []
      : [
          `expected exactly one winner (${statuses.winner.join(" or ")}) and ${race.answers.length - 1} losers ` +
            `(${statuses.losers.join(" or ")}); got ${winners.length} winner(s)` +
            (winners.length > 0 ? ` (actor ${winners.map((answer) => answer.actor).join(", actor ")})` : ""),
        ];
  fail("expectOneWinner", problems, race);
}

/**
 * The side effect happened `expected` times, counted by the test's own `count` (rows, charges, a
 * provider's call log) once every answer is in.
 */
export async function expectEffects(
  count: () => number | Promise<number>,
  expected: number,
  race?: RaceResult,
): Promise<void> {
  const counted = await count();
  const problems = counted === expected ? [] : [`expected the effect ${expected} time(s), counted ${counted}`];
  fail("expectEffects", problems, race);
}

function fail(assertion: string, problems: string[], race: RaceResult | undefined): void {
  if (problems.length === 0) return;
  throw new Error([`${assertion} failed:`, ...problems.map((line) => `  ${line}`), race?.story ?? ""].join("\n"));
}
