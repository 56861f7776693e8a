/**
 * What one call gets, drawn before the provider does anything with it: the settings in force, its outcome
 * (a scripted one-shot first, else a roll against the rates) and its latency.
 */
import type { Kysely } from "kysely";
import { effectiveChaos, type ProviderEndpoint, type ProviderSettings, type ScriptedOutcome } from "./chaos-settings";
import { rollOutcome, sampleLatency } from "./chaos";
import { randomSource } from "./random-source";
import type { IdpDatabase } from "./schema";

/**
 * The simulator's port for its knobs: whoever drives it (the lab) says what they are for each call, and
 * hands out the one-shot scripted outcomes, each once.
 */
export interface ChaosSource {
  settings(): Promise<ProviderSettings>;
  /**
   * The knobs in force with the revision of the driver's announcement they came in (null when it has none to
   * name), as `GET /lab/knobs` answers them: so that a driver can wait until a change is in force here.
   */
  knobsAsHeard(): Promise<{ knobs: ProviderSettings; revision: string | null }>;
  takeScriptedOutcome(endpoint: ProviderEndpoint): Promise<ScriptedOutcome | null>;
}

/** The endpoints the provider serves: the three a switch calls, and a profile update. */
export type EndpointName = ProviderEndpoint | "rename";

export interface CallDraw {
  settings: ProviderSettings;
  outcome: ScriptedOutcome;
  latencyMs: number;
  retryAfterSeconds: number;
}

export async function drawCall(db: Kysely<IdpDatabase>, source: ChaosSource, name: EndpointName): Promise<CallDraw> {
  const settings = await source.settings();
  // A rename (profile update) has no per-endpoint overrides or script: the lab's global latency and failures.
  const chaos = name === "rename" ? settings : effectiveChaos(settings, name);
  const random = await randomSource(db, settings.seed);
  const scripted =
    name !== "rename" && settings.script[name].length > 0 ? await source.takeScriptedOutcome(name) : null;
  return {
    settings,
    outcome: scripted ?? rollOutcome(chaos, random),
    latencyMs: sampleLatency(chaos, random),
    retryAfterSeconds: chaos.retryAfterSeconds,
  };
}
