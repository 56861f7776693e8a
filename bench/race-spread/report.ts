/** The trials of `npm run bench:race` as the README's table: each spread's median [min–max], and what `none` let through. */
import { median } from "../stats";
import type { Trial } from "./settings";

export interface Row {
  actors: number;
  send: string;
  trials: number;
  sendMs: Figure | null;
  arrivalMs: Figure | null;
  /** Trials whose audit found the provider corrupted. */
  corrupted: number;
  /** Trials in which more than one switch answered 200. */
  severalWon: number;
}

interface Figure {
  median: number;
  min: number;
  max: number;
}

const figure = (values: (number | null)[]): Figure | null => {
  const known = values.filter((value): value is number => value !== null);
  return known.length === 0 ? null : { median: median(known), min: Math.min(...known), max: Math.max(...known) };
};

export function rowsOf(trials: Trial[]): Row[] {
  const keys = [...new Set(trials.map((trial) => `${trial.actors}|${trial.send}`))];
  return keys.map((key) => {
    const group = trials.filter((trial) => `${trial.actors}|${trial.send}` === key);
    return {
      actors: group[0]!.actors,
      send: group[0]!.send,
      trials: group.length,
      sendMs: figure(group.map((trial) => trial.sendMs)),
      arrivalMs: figure(group.map((trial) => trial.arrivalMs)),
      corrupted: group.filter((trial) => trial.corrupt).length,
      severalWon: group.filter((trial) => trial.statuses.filter((status) => status === 200).length > 1).length,
    };
  });
}

const ms = (value: number) => (value < 1 ? value.toFixed(3) : value < 10 ? value.toFixed(2) : value.toFixed(1));
// The lanes' `requestedAt` counts whole milliseconds: an arrival spread shown as 0.000 would claim more than that.
const wholeMs = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));
const shown = (value: Figure | null, format: (value: number) => string) =>
  value ? `${format(value.median)} [${format(value.min)}–${format(value.max)}]` : "—";

export function tableOf(rows: Row[]): string {
  return [
    "| N | sent by | send spread, ms | arrival spread, ms | provider corrupted | more than one 200 |",
    "| -: | --- | --: | --: | --: | --: |",
    ...rows.map(
      (row) =>
        `| ${row.actors} | ${row.send} | ${shown(row.sendMs, ms)} | ${shown(row.arrivalMs, wholeMs)} | ` +
        `${row.corrupted} of ${row.trials} | ${row.severalWon} of ${row.trials} |`,
    ),
  ].join("\n");
}
