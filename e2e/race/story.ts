import { test } from "@playwright/test";
import path from "node:path";
import type { Release } from "./barrier.js";
import type { Send } from "./flight.js";
import type { RaceAnswer } from "./race.js";
import { describeSpread, type Spread } from "./spread.js";

export interface RaceRecord {
  mode: "contexts" | "tabs";
  release: Release;
  send: Send;
  /** Unknown when the race failed before every answer was in. */
  spread?: Spread;
  hold: string;
  answers: RaceAnswer[];
  releaseOrder: number[];
  extra: ReadonlyMap<number, number>;
}

/** A race in words: who got what, in which order and how close together the requests went, and where the trace is. */
export function describeRace(race: RaceRecord): string {
  const where = race.mode === "tabs" ? "as tabs of one browser context" : "each in its own browser context";
  const order = race.releaseOrder.length > 0 ? race.releaseOrder.map((actor) => `actor ${actor}`).join(", ") : "none";
  return [
    `race of ${race.answers.length} held requests, ${where}, holding ${race.hold}`,
    `released ${describeRelease(race.release)}; order let go: ${order}`,
    ...(race.spread ? [describeSpread(race.send, race.spread, race.answers.length)] : []),
    ...race.answers.map(describeAnswer),
    ...[...race.extra].map(([actor, count]) => `  actor ${actor} sent ${count} more matching request(s), not held`),
    tracePointer(),
  ].join("\n");
}

export function describeRelease(release: Release): string {
  return typeof release === "string" ? release : `staggered by ${release.staggerMs.join(", ")} ms`;
}

function describeAnswer(answer: RaceAnswer): string {
  const outcome = answer.status === 0 ? `no answer (${answer.failure ?? "unknown"})` : `${answer.status}`;
  const times = [
    `held at ${ms(answer.heldAtMs)}`,
    `released at ${ms(answer.releasedAtMs)}`,
    `answered at ${ms(answer.answeredAtMs)}`,
  ].join(", ");
  const body = answer.body === undefined ? "" : ` ${truncated(JSON.stringify(answer.body))}`;
  return `  actor ${answer.actor}: ${outcome} (${answer.method} ${new URL(answer.url).pathname}; ${times})${body}`;
}

function ms(value: number): string {
  if (Number.isNaN(value)) return "—";
  const rounded = Math.round(value) || 0; // never "-0"
  return `${rounded >= 0 ? "+" : ""}${rounded} ms`;
}

const truncated = (text: string, max = 160) => (text.length > max ? `${text.slice(0, max)}…` : text);

function tracePointer(): string {
  const info = test.info();
  const option = info.project.use.trace;
  const mode = typeof option === "object" ? option.mode : (option ?? "off");
  if (mode === "off") return "trace: none recorded (set use.trace to 'retain-on-failure' to keep one)";
  const trace = path.relative(process.cwd(), info.outputPath("trace.zip"));
  return `trace (use.trace '${mode}'): ${trace}; open it with: npx playwright show-trace ${trace}`;
}
