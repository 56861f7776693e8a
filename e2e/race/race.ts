import {
  test as base,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Page,
  type Request,
  type Route,
} from "@playwright/test";
import { Barrier, type HeldRequest, type Release } from "./barrier.js";
import { sendInOneFlight, type Send } from "./flight.js";
import { arrivalSpread, browserSendTimes, spreadOf, type ArrivalTime, type Spread } from "./spread.js";
import { describeRace, describeRelease } from "./story.js";

export interface RaceOptions {
  /** How many actors race (2 or more). */
  actors: number;
  /**
   * `contexts` (the default): each actor its own browser context, as two devices or two people would be
   * (own cookies, own storage). `tabs`: each actor a page of one shared context, as two tabs of one browser.
   */
  mode?: "contexts" | "tabs";
  /** Options of the contexts the race creates, over the config's `use`. */
  contextOptions?: BrowserContextOptions;
  /** Prepares actor i (sign in, go to the page). All actors open at once, before anything is held. */
  open?: (page: Page, actor: number) => Promise<void>;
  /** The action (a click, a submit). All actors act at once; an act must not wait for its held answer. */
  act: (page: Page, actor: number) => Promise<unknown>;
  /**
   * The requests to line up: a URL glob or RegExp (any method), or a predicate. Each actor's first
   * matching request is held; later matching ones go out unheld (the story counts them).
   */
  hold: string | RegExp | ((request: Request) => boolean);
  /** The order held requests go out in once all are held. Default: together. */
  release?: Release;
  /**
   * Who sends the held requests: `browser` (the default), or the kit itself, `last-byte` (HTTP/1.1) or
   * `single-packet` (HTTP/2), each page then handed its answer. The kit's own sending takes `release: "together"`.
   */
  send?: Send;
  /**
   * The times the server saw this race's requests arrive, by its own clock, read once every answer is in
   * (a log, a timeline): the story and `spread` report how far apart they were.
   */
  arrivals?: () => Promise<readonly ArrivalTime[]>;
  /**
   * How long to wait for every actor's request before failing, from when the pages are open. Default 30 s: the
   * acts are the browser's (a click, a fetch), and on a loaded 2-core CI machine three of them took up to 9.5 s.
   */
  barrierTimeoutMs?: number;
}

export interface RaceAnswer {
  actor: number;
  method: string;
  url: string;
  /** 0 when no HTTP answer came (see `failure`). */
  status: number;
  /** The answer's body: parsed JSON, else text. */
  body: unknown;
  failure?: string;
  /** Times in ms from the moment the barrier opened (negative: before). */
  heldAtMs: number;
  releasedAtMs: number;
  answeredAtMs: number;
  /** From release to the complete answer. */
  durationMs: number;
}

export interface RaceResult {
  mode: "contexts" | "tabs";
  release: Release;
  send: Send;
  /** How close together the requests went out, and arrived when the server reports it. */
  spread: Spread;
  hold: string;
  /** Actor i's page, to read what it shows. */
  pages: Page[];
  /** Actor i's answer. */
  answers: RaceAnswer[];
  /** The actors in the order their requests were let go. */
  releaseOrder: number[];
  /** Matching requests an actor sent beyond its held one (they were not held). */
  extraRequests: Record<number, number>;
  /** Which actor got what, the release order, and where the trace is: what a failure prints. */
  story: string;
}

export type Race = (options: RaceOptions) => Promise<RaceResult>;

/**
 * `race` as a fixture: it owns the contexts it creates and closes them after the test (their traces are
 * recorded with the test's when `use.trace` is on). Combine with your own fixtures by `mergeTests`.
 */
export const test = base.extend<{ race: Race }>({
  race: async ({ browser, ignoreHTTPSErrors }, use) => {
    const contexts: BrowserContext[] = [];
    await use((options) =>
      runRace(browser, contexts, {
        ...options,
        ignoreHTTPSErrors: options.contextOptions?.ignoreHTTPSErrors ?? ignoreHTTPSErrors,
      }),
    );
    await Promise.all(contexts.map((context) => context.close()));
  },
});

/** The race's options with what the fixture adds: whether the kit's own connections take any certificate. */
type RunOptions = RaceOptions & { ignoreHTTPSErrors: boolean };

const sends: readonly Send[] = ["browser", "last-byte", "single-packet"];

async function runRace(browser: Browser, contexts: BrowserContext[], options: RunOptions): Promise<RaceResult> {
  const { actors, act, hold } = options;
  const mode = options.mode ?? "contexts";
  const release = options.release ?? "together";
  const send = options.send ?? "browser";
  if (!Number.isInteger(actors) || actors < 2) throw new Error(`race: actors must be an integer of 2 or more`);
  if (typeof release === "object" && release.staggerMs.length !== actors)
    throw new Error(`race: staggerMs needs one delay per actor (${actors}), got ${release.staggerMs.length}`);
  if (!sends.includes(send)) throw new Error(`race: send must be one of ${sends.join(", ")}; got ${String(send)}`);
  if (send !== "browser" && release !== "together")
    throw new Error(
      `race: send "${send}" sends every request at once: it takes release "together", not ${describeRelease(release)}`,
    );

  const pages = await base.step(`race: open ${actors} actors (${mode})`, async () => {
    const shared = mode === "tabs" ? await newContext(browser, contexts, options) : undefined;
    const opened = await Promise.all(
      Array.from({ length: actors }, async () => (shared ?? (await newContext(browser, contexts, options))).newPage()),
    );
    await Promise.all(opened.map((page, actor) => options.open?.(page, actor)));
    return opened;
  });

  const barrier = new Barrier(actors);
  const matches = typeof hold === "function" ? hold : () => true;
  const pattern = typeof hold === "function" ? "**/*" : hold;
  const handlers = pages.map((_, actor) => (route: Route, request: Request) => {
    if (!matches(request) || !barrier.hold(actor, route, request)) return route.fallback();
  });
  await Promise.all(pages.map((page, actor) => page.route(pattern, handlers[actor]!)));

  const holdText = typeof hold === "function" ? "requests the hold predicate picks" : `requests matching ${hold}`;
  const acts = pages.map((page, actor) => act(page, actor));
  // An act that fails after the barrier gave up must not surface later as an unhandled rejection.
  void Promise.allSettled(acts);
  let releaseOrder: number[] = [];
  let flight: { flightMs: number; acknowledged: number } | null;
  let openedAt = performance.now();
  const record = { mode, release, send, hold: holdText, extra: barrier.extra };
  try {
    await base.step(`race: hold ${holdText} until all ${actors} are in`, () =>
      Promise.race([barrier.whenFull(options.barrierTimeoutMs ?? 30_000), Promise.all(acts).then(() => never)]),
    );
    openedAt = performance.now();
    ({ releaseOrder, flight } = await letGo(barrier, send, release, options));
  } catch (error) {
    await barrier.abortHeld();
    const partial = barrier.heldRequests().map((held) => unanswered(held, openedAt));
    const story = describeRace({ ...record, releaseOrder, answers: partial });
    throw new Error(`race: ${(error as Error).message}\n${missing(actors, partial)}${story}`, { cause: error });
  }

  const held = barrier.heldRequests();
  const answers = await base.step("race: wait for every answer", () =>
    Promise.all(held.map((each) => answerOf(each, openedAt))),
  );
  await Promise.all(pages.map((page, actor) => page.unroute(pattern, handlers[actor])));
  await Promise.all(acts);

  const spread: Spread = {
    sendMs: flight ? flight.flightMs : spreadOf(browserSendTimes(held.map((each) => each.request))),
    acknowledged: flight?.acknowledged ?? null,
    ...(options.arrivals ? arrivalSpread(await options.arrivals()) : { arrivalMs: null, arrivals: 0 }),
  };
  const extraRequests = Object.fromEntries(barrier.extra);
  const story = describeRace({ ...record, releaseOrder, answers, spread });
  await base.info().attach("race", { body: story, contentType: "text/plain" });
  return { mode, release, send, spread, hold: holdText, pages, answers, releaseOrder, extraRequests, story };
}

/**
 * Lets the held requests go: the browser sends them, in the release's order; or the kit sends them itself, in
 * one flight (then `flight`: how long writing every final byte took, and how many requests the server had
 * acknowledged before).
 */
async function letGo(barrier: Barrier, send: Send, release: Release, options: RunOptions) {
  if (send === "browser") {
    const releaseOrder = await base.step(`race: release ${describeRelease(release)}`, () => barrier.release(release));
    return { releaseOrder, flight: null };
  }
  const held = barrier.open();
  const flight = await base.step(`race: send ${send}`, () => sendInOneFlight(held, send, options));
  return { releaseOrder: held.map((each) => each.actor), flight };
}

/** Lets `Promise.race` keep waiting for the barrier when every act ended: only the barrier decides. */
const never = new Promise<never>(() => {});

async function newContext(browser: Browser, contexts: BrowserContext[], options: RaceOptions) {
  const context = await browser.newContext(options.contextOptions);
  contexts.push(context);
  return context;
}

async function answerOf(held: HeldRequest, openedAt: number): Promise<RaceAnswer> {
  await held.delivered;
  const response = await held.request.response();
  const text = response ? await response.text().catch(() => "") : "";
  return {
    ...unanswered(held, openedAt),
    status: response?.status() ?? 0,
    body: parsed(text),
    failure: response ? undefined : (held.sendFailure ?? held.request.failure()?.errorText ?? "no answer"),
    answeredAtMs: performance.now() - openedAt,
    durationMs: performance.now() - (held.releasedAt ?? openedAt),
  };
}

function unanswered(held: HeldRequest, openedAt: number): RaceAnswer {
  return {
    actor: held.actor,
    method: held.request.method(),
    url: held.request.url(),
    status: 0,
    body: undefined,
    failure: held.releasedAt === undefined ? "held, never released" : undefined,
    heldAtMs: held.heldAt - openedAt,
    releasedAtMs: (held.releasedAt ?? Number.NaN) - openedAt,
    answeredAtMs: Number.NaN,
    durationMs: Number.NaN,
  };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function missing(actors: number, held: RaceAnswer[]): string {
  const absent = Array.from({ length: actors }, (_, actor) => actor).filter(
    (actor) => !held.some((answer) => answer.actor === actor),
  );
  return absent.length === 0 ? "" : `actors that sent no held request: ${absent.join(", ")}\n`;
}
