/**
 * A run's variant captions: each names what sets its variant apart from the run's others, in a few words a
 * phone's screen can hold ("mapped lock column" / "unmapped", "textbook lease" / "safeguards on"). Read off the
 * settings each variant ran with, or taken from the experiment's own words for what no setting says ("one
 * instance" / "two instances"). Pure: unit-tested in captions.test.ts.
 */
import { defaultLabSettings, type LabSettings } from "../settings-schema";

type Value = string | number | boolean | null;

/** A variant as the caption sees it: the settings that differ between the run's variants, and its own words. */
export interface CaptionInput {
  /** The strategy it ran under: the caption of a variant nothing else names. */
  strategy: string;
  /** Setting path (`provider.enforceFencing`) → its value in this variant, for the settings that differ. */
  differences: Record<string, Value>;
  /** The experiment's words for what no setting says, or null. */
  note: string | null;
}

/** Settings, flattened to paths: objects open up, arrays and scalars are values (arrays as JSON). */
function flatten(value: unknown, prefix = ""): Record<string, Value> {
  if (value !== null && typeof value === "object" && !Array.isArray(value))
    return Object.assign(
      {},
      ...Object.entries(value).map(([key, inner]) => flatten(inner, prefix ? `${prefix}.${key}` : key)),
    );
  return { [prefix]: Array.isArray(value) ? JSON.stringify(value) : (value as Value) };
}

/** For each variant, the settings (as paths) whose values are not the same in every variant of the run. */
export function settingsThatDiffer(settings: LabSettings[]): Record<string, Value>[] {
  const flat = settings.map((each) => flatten(each));
  const paths = [...new Set(flat.flatMap((each) => Object.keys(each)))];
  const differing = paths.filter((path) => new Set(flat.map((each) => JSON.stringify(each[path] ?? null))).size > 1);
  return flat.map((each) => Object.fromEntries(differing.map((path) => [path, each[path] ?? null])));
}

const duration = (ms: number): string =>
  ms >= 1_000 ? `${(ms / 1_000).toLocaleString("en", { maximumFractionDigits: 1 })} s` : `${ms} ms`;

const stallWords: Record<string, string> = {
  acquired: "after acquiring",
  unlinked: "after unlinking",
  linked: "after linking",
  saved: "after saving",
  save: "before its save",
};

const timesWords = (count: number): string => (count === 1 ? "once" : count === 2 ? "twice" : `${count} times`);

/**
 * The words for the settings a lesson turns on, most telling first; a value with no words (a fault that is
 * off, fencing not enforced) says nothing.
 */
const lessonWords: [path: string | RegExp, words: (value: Value) => string | null][] = [
  ["strategy", (value) => String(value)],
  ["lockColumnMapped", (value) => (value ? "mapped lock column" : "unmapped")],
  ["leaseSafeguards", (value) => (value ? "safeguards on" : "textbook lease")],
  ["faults.crash", (value) => (value ? `crash ${String(value).replace("-", " ")}` : null)],
  ["faults.stall.at", (value) => (value ? `pauses ${stallWords[String(value)] ?? String(value)}` : null)],
  ["faults.releaseFailures", (value) => (Number(value) > 0 ? `release fails ${timesWords(Number(value))}` : null)],
  ["faults.unfencedSave", (value) => (value ? "unfenced save" : null)],
  ["provider.enforceFencing", (value) => (value ? "fencing enforced" : null)],
  [/^provider\.script\.(get|unlink|link)$/, () => null],
  ["poolSize", (value) => `pool of ${value}`],
  ["leaseTtlMs", (value) => `TTL ${duration(Number(value))}`],
  ["reconcileAfterMs", (value) => (value === null ? "reconciler off" : null)],
];

/** The staging around the lesson (latencies, limits): said only when nothing above tells the variants apart. */
const stagingWords: [path: string | RegExp, words: (value: Value) => string | null][] = [
  ["provider.latencyMode", (value) => (value === "longTail" ? "long-tail latency" : null)],
  ["provider.latencyMs", (value) => `calls ${duration(Number(value))}`],
  ["provider.applyLimitMs", (value) => `apply limit ${duration(Number(value))}`],
];

const matches = (pattern: string | RegExp, path: string) =>
  typeof pattern === "string" ? pattern === path : pattern.test(path);

/** A word, and whether it names a value the variant set (not the default it shares with the seed). */
interface Word {
  text: string;
  changed: boolean;
}

const defaults = flatten(defaultLabSettings);

function wordsOf(differences: Record<string, Value>, table: typeof lessonWords): Word[] {
  const said: Word[] = [];
  for (const [pattern, words] of table)
    for (const [path, value] of Object.entries(differences))
      if (matches(pattern, path)) {
        const word = path.startsWith("provider.script.") ? scriptWords(path, value) : words(value);
        const text = word && path === "faults.stall.at" ? pausedFor(word, differences) : word;
        if (text) said.push({ text, changed: JSON.stringify(defaults[path] ?? null) !== JSON.stringify(value) });
      }
  return said;
}

/** A scripted outcome: "link answers 500", "unlink answers timeout, then 200". */
function scriptWords(path: string, value: Value): string | null {
  const outcomes = typeof value === "string" ? (JSON.parse(value) as unknown[]) : [];
  return outcomes.length > 0 ? `${path.split(".").at(-1)} answers ${outcomes.join(", then ")}` : null;
}

/** A pause says how long: "pauses 1.2 s after acquiring". */
const pausedFor = (word: string, differences: Record<string, Value>): string =>
  typeof differences["faults.stall.ms"] === "number"
    ? word.replace("pauses", `pauses ${duration(differences["faults.stall.ms"])}`)
    : word;

/**
 * Each variant's first word, and its second when that names something the variant set (so that a pause
 * says which lease it pauses); then, while two captions are alike, one more word for each of them.
 */
function shortest(all: Word[][]): string[] {
  const counts = all.map((words) => Math.min(words[1]?.changed ? 2 : 1, words.length));
  const caption = (index: number) =>
    all[index]!.slice(0, counts[index])
      .map((word) => word.text)
      .join(", ");
  for (let alike = true; alike;) {
    const captions = all.map((_, index) => caption(index));
    const extend = all.flatMap((words, index) =>
      counts[index]! < words.length && captions.some((other, at) => at !== index && other === captions[index])
        ? [index]
        : [],
    );
    extend.forEach((index) => counts[index]!++);
    alike = extend.length > 0;
  }
  return all.map((_, index) => caption(index));
}

/** Each variant's caption, distinct within the run. */
export function variantCaptions(variants: CaptionInput[]): string[] {
  const lesson = variants.map((variant) => wordsOf(variant.differences, lessonWords));
  const staging = variants.map((variant) => wordsOf(variant.differences, stagingWords));
  const fromSettings = shortest(lesson.map((words, index) => (words.length > 0 ? words : staging[index]!)));
  const captions = variants.map((variant, index) => {
    if (variant.note === null) return fromSettings[index] || variant.strategy;
    const strategy = variant.differences.strategy;
    return typeof strategy === "string" ? `${strategy}, ${variant.note}` : variant.note;
  });
  // Still alike (the same settings, no words of the experiment's own): told apart by their order.
  return captions.map((caption, index) =>
    captions.filter((other) => other === caption).length > 1 ? `${caption} (variant ${index + 1})` : caption,
  );
}

/** A run's captions from what each variant ran with (its settings, the experiment's words), and what each was read from. */
export function captionsOf(variants: { settings: LabSettings; note: string | null }[]) {
  const differences = settingsThatDiffer(variants.map((variant) => variant.settings));
  const inputs: CaptionInput[] = variants.map((variant, index) => ({
    strategy: variant.settings.strategy,
    differences: differences[index]!,
    note: variant.note,
  }));
  const labels = variantCaptions(inputs);
  return inputs.map((captionFrom, index) => ({ label: labels[index]!, captionFrom }));
}
