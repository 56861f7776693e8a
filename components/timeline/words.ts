/** The timeline's words: a lane's label, a refused group's, and a focused item's description. */
import { answerWords, type Lane } from "../../lib/lab/lane";
import type { Item } from "./geometry";

const ms = (iso: string): number => Date.parse(iso);

export const seconds = (at: number, origin: number): string => `${((at - origin) / 1000).toFixed(3)} s`;

const short = (operationId: string): string => operationId.slice(0, 8);

/** A lease kept past the answer, for a call whose outcome is unknown: the release phase that says why. */
export const keptRelease = (lane: Lane) =>
  lane.phases.find((phase) => phase.name === "release" && phase.outcome === "kept");

export function laneLabel(lane: Lane, caption: string | null): string {
  const kept = keptRelease(lane);
  return (
    `${caption ? `${caption}: ` : ""}${short(lane.operationId)} → ${lane.toIdentityId ?? "settle leftovers"} · ` +
    `${lane.strategy} · ${answerWords(lane)}${kept ? ` · lease ${kept.detail ?? "kept"}` : ""} · ` +
    `instance ${lane.instance}`
  );
}

export function refusedLabel(lanes: Lane[], holder: Lane | null): string {
  const answers = [...new Set(lanes.map(answerWords))].join(", ");
  return holder
    ? `${lanes.length} requests refused while ${short(holder.operationId)} held the lease · ${answers}`
    : `${lanes.length} requests refused (the holder is outside this window) · ${answers}`;
}

export function describeItem({ lane, phase, style }: Item, origin: number): string {
  const start = seconds(ms(phase.startedAt), origin);
  const end = phase.endedAt ? seconds(ms(phase.endedAt), origin) : "still running";
  const took = phase.endedAt ? ` (${ms(phase.endedAt) - ms(phase.startedAt)} ms)` : "";
  const what = [phase.outcome, phase.detail].filter(Boolean).join(": ");
  return (
    `Operation ${short(lane.operationId)}, ${phase.name} from ${start} to ${end}${took}` +
    `${what ? `, ${what}` : ""}${style.collision ? `. Collision: ${style.collision}` : ""}` +
    `${style.appliedLate ? ". Applied late: the provider carried it out after the caller gave up" : ""}`
  );
}

/**
 * A caption cut at spaces into at most `lines` lines of at most `chars` characters, the last one ending in
 * "…" when the caption is longer. Each line but the last keeps the space it was cut at, so that the lines
 * read (and are found) as the caption itself.
 */
export function captionLines(text: string, chars: number, lines: number): string[] {
  const result: string[] = [];
  let rest = text;
  while (rest.length > 0 && result.length < lines) {
    if (rest.length <= chars) {
      result.push(rest);
      break;
    }
    if (result.length === lines - 1) {
      result.push(`${rest.slice(0, Math.max(1, chars - 1)).trimEnd()}…`);
      break;
    }
    const cut = rest.lastIndexOf(" ", chars);
    const end = cut > 0 ? cut + 1 : chars;
    result.push(rest.slice(0, end));
    rest = rest.slice(end);
  }
  return result;
}

/** About how many characters of the captions' type (`fontPx`, system sans) fit in `px`. */
export const charsIn = (px: number, fontPx = 11): number => Math.max(8, Math.floor(px / (fontPx * 0.58)));
