/** A race kit for Playwright: N actors, one client-side barrier, one winner asserted. See README.md. */
export { test, type Race, type RaceAnswer, type RaceOptions, type RaceResult } from "./race.js";
export type { Release } from "./barrier.js";
export type { Send } from "./flight.js";
export type { ArrivalTime, Spread } from "./spread.js";
export { expectEffects, expectOneWinner, expectOnlyAnswers } from "./expect.js";
export { doubleClick } from "./double-click.js";
