import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { defaultLabSettings, type LabSettings } from "../settings-schema";
import { captionsOf, settingsThatDiffer, variantCaptions, type CaptionInput } from "./captions";
import { experiments } from "./registry";
import type { RunRecord } from "./runs";

/** The settings a variant ran with: the defaults, and what it changed (as `lab.fresh` applies a patch). */
const ran = (patch: Partial<Omit<LabSettings, "faults" | "provider">> & Record<string, unknown>): LabSettings => {
  const { faults, provider, ...rest } = patch as { faults?: object; provider?: object };
  return {
    ...defaultLabSettings,
    ...rest,
    faults: { ...defaultLabSettings.faults, ...faults },
    provider: { ...defaultLabSettings.provider, ...provider },
  } as LabSettings;
};
const labels = (...variants: { settings: LabSettings; note?: string }[]) =>
  captionsOf(variants.map((variant) => ({ settings: variant.settings, note: variant.note ?? null }))).map(
    (caption) => caption.label,
  );

/** Most a caption may be: about what a phone's legend holds on two lines. */
const longestCaption = 44;

describe("variant captions", () => {
  it("name the one setting that differs, in words", () => {
    const shared = { leaseSafeguards: false, provider: { latencyMs: 200 } };
    expect(
      labels(
        { settings: ran({ ...shared, lockColumnMapped: true }) },
        { settings: ran({ ...shared, lockColumnMapped: false }) },
      ),
    ).toEqual(["mapped lock column", "unmapped"]);
    expect(labels({ settings: ran({ poolSize: 2 }) }, { settings: ran({ poolSize: 8 }) })).toEqual([
      "pool of 2",
      "pool of 8",
    ]);
  });

  it("say as much as tells each variant apart: a textbook lease, the same with fencing, the safeguards", () => {
    const short = { leaseTtlMs: 500, provider: { latencyMs: 1_000 } };
    expect(
      labels(
        { settings: ran({ ...short, leaseSafeguards: false }) },
        { settings: ran({ ...short, leaseSafeguards: false, provider: { latencyMs: 1_000, enforceFencing: true } }) },
        { settings: ran({ ...short, leaseSafeguards: true, provider: { latencyMs: 1_000, applyLimitMs: 1_500 } }) },
      ),
    ).toEqual(["textbook lease", "textbook lease, fencing enforced", "safeguards on"]);
  });

  it("say how long a pause lasts and where, and which strategy a variant ran", () => {
    expect(
      labels(
        { settings: ran({ leaseSafeguards: false, faults: { stall: { at: "acquired", ms: 1_200 } } }) },
        { settings: ran({ leaseSafeguards: true, faults: { stall: { at: "save", ms: 5_000 } } }) },
      ),
    ).toEqual(["textbook lease, pauses 1.2 s after acquiring", "safeguards on, pauses 5 s before its save"]);
    expect(labels({ settings: ran({ strategy: "lease" }) }, { settings: ran({ strategy: "transaction" }) })).toEqual([
      "lease",
      "transaction",
    ]);
  });
});

describe("variant captions, when settings alone do not tell", () => {
  it("name a scripted outcome, and leave out a default both share with the seed unless it tells them apart", () => {
    const calls = { latencyMs: 250 };
    expect(
      labels(
        { settings: ran({ strategy: "lease", provider: calls }) },
        { settings: ran({ strategy: "transaction", provider: calls }) },
        {
          settings: ran({
            strategy: "transaction",
            provider: { ...calls, script: { get: [], unlink: [], link: ["500"] } },
          }),
        },
      ),
    ).toEqual(["lease", "transaction", "transaction, link answers 500"]);
    const paused = {
      leaseTtlMs: 1_000,
      provider: { enforceFencing: true },
      faults: { stall: { at: "unlinked", ms: 2_000 } },
    };
    expect(
      labels(
        { settings: ran({ strategy: "advisory" }) },
        { settings: ran({ strategy: "redis" }) },
        { settings: ran({ strategy: "redis", ...paused }) },
      ),
    ).toEqual(["advisory", "redis", "redis, pauses 2 s after unlinking"]);
  });

  it("take the experiment's words for what no setting says, after the strategy when that differs", () => {
    expect(
      labels(
        { settings: ran({ strategy: "in-process" }), note: "one instance" },
        { settings: ran({ strategy: "in-process", provider: { latencyMs: 400 } }), note: "two instances" },
        { settings: ran({ strategy: "lease", provider: { latencyMs: 400 } }), note: "two instances" },
      ),
    ).toEqual(["in-process, one instance", "in-process, two instances", "lease, two instances"]);
  });

  it("fall back on the staging, then on the order, when nothing else tells variants apart; one alone is its strategy", () => {
    expect(labels({ settings: ran({ provider: { latencyMs: 100 } }) }, { settings: ran({}) })).toEqual([
      "calls 100 ms",
      "calls 800 ms",
    ]);
    expect(labels({ settings: ran({}) }, { settings: ran({}) })).toEqual(["lease (variant 1)", "lease (variant 2)"]);
    expect(labels({ settings: ran({ strategy: "redis" }) })).toEqual(["redis"]);
  });

  it("compare settings as paths, arrays and null as values", () => {
    const [first, second] = settingsThatDiffer([
      ran({ provider: { script: { get: [], unlink: [], link: ["500"] } } }),
      ran({ reconcileAfterMs: null }),
    ]);
    expect(first).toEqual({ "provider.script.link": '["500"]', reconcileAfterMs: 3_000 });
    expect(second).toEqual({ "provider.script.link": "[]", reconcileAfterMs: null });
  });
});

/** The shipped runs (`npm run course:record`): a real run of every card, committed for the course. */
const shippedRun = (experimentId: string): RunRecord | null => {
  const file = path.resolve(import.meta.dirname, `../../../public/course/runs/${experimentId}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as RunRecord) : null;
};

describe("every card's captions, as its shipped run recorded what each variant ran with", () => {
  for (const { id } of experiments)
    it(`${id}: each variant gets a distinct caption, short enough for a phone, the one the run was saved with`, () => {
      const run = shippedRun(id);
      expect(run, `no shipped run for ${id}: npm run course:record -- --only ${id}`).not.toBeNull();
      const inputs = run!.variants.map((variant) => variant.captionFrom);
      expect(inputs.every((input) => input !== undefined)).toBe(true);
      const captions = variantCaptions(inputs as CaptionInput[]);
      expect(captions).toEqual(run!.variants.map((variant) => variant.label));
      expect(new Set(captions).size).toBe(captions.length);
      for (const caption of captions) expect(caption.length).toBeLessThanOrEqual(longestCaption);
    });
});
