/** A race kit for Playwright: N actors, one client-side barrier, one winner asserted. See README.md. */
export { test, type Race, type RaceAnswer, type RaceOptions, type RaceResult } from "./race";
export type { Release } from "./barrier";
export { expectEffects, expectOneWinner, expectOnlyAnswers } from "./expect";
export { doubleClick } from "./double-click";
