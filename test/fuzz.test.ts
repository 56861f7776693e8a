import fc from "fast-check";
import { sql } from "kysely";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { createDb } from "../db/connection";
import { defaultLabSettings, labSettingsPatchSchema } from "../lib/lab/settings-schema";
import { allowedMethods, apiRouteMethods } from "../lib/web/api-routes";
import { appClient, rawRequest, type AppClient } from "./harness/http-client";

/**
 * Generated bad requests across every endpoint: each must get a 4xx (never a 5xx) and change nothing.
 * Every generator makes only requests that are certainly wrong, so that none may change state.
 */
const appUrl = inject("appUrl");
const app = appClient(appUrl);
let ada: AppClient;
// Generators are built before ada signs in: they name her session value, filled in when a request is sent.
const adaValue = "<ada>";
const adaCookie = `lab_session=${adaValue}`;
let adaSessionValue: string;
const { db } = createDb(inject("databaseUrl"), 1);
afterAll(() => db.destroy());

beforeAll(async () => {
  await app.reset();
  await app.configure({ provider: { latencyMs: 0 } });
  ada = await app.signedIn("ada");
  const signIn = await fetch(`${appUrl}/api/session`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ userId: "ada" }),
  });
  adaSessionValue = signIn.headers.getSetCookie()[0]!.split(";")[0]!.slice("lab_session=".length);
});

/** Everything a bad request could have changed: users, leases, settings, provider state and its log, saved runs. */
async function observableState() {
  const [adaView, settings, provider, runs] = await Promise.all([
    ada.get("/api/users/ada"),
    app.get("/api/lab"),
    app.provider(),
    sql<{ saved: string }>`SELECT count(*) AS saved FROM experiment_runs`.execute(db),
  ]);
  return { ada: adaView.body, settings: settings.body, provider, savedRuns: runs.rows[0]!.saved };
}

interface BadRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Sent without a length (chunked), as a stream. */
  chunked?: boolean;
}

const json = { "Content-Type": "application/json" };
const seedUsers = ["ada", "grace", "alan", "katherine"];
const adasIdentities = ["google-oauth2|104423", "github|8812", "auth0|ada-email", "apple|001122.ada"];

// Header values must be visible ASCII (fetch trims spaces and refuses control characters).
const headerSafe = fc.constantFrom(..."abcXYZ019-_.:!~*'()[]{}@$&+=/\\\"<>?^`|%");
const weirdString = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constant(""),
  fc.integer({ min: 1_000, max: 200_000 }).map((length) => "x".repeat(length)),
  fc.constantFrom("\u0000", "../../etc/passwd", "'; DROP TABLE users; --", "ada\u202e", "%FF", "💥".repeat(500)),
);
const wrongValue = fc.oneof(fc.anything(), weirdString);

const malformedEscape = fc.constantFrom("%FF", "%C0%AF", "%E0%A4%A", "%", "%G1", "%%41", "%C3%28", "%ED%A0%80", "%80");
const badPath = fc
  .tuple(
    fc.stringMatching(/^[a-z]{0,4}$/),
    malformedEscape,
    fc.constantFrom("", "/primary"),
    fc.constantFrom("GET", "POST"),
  )
  .map(([prefix, escape, rest, method]): BadRequest => ({
    method,
    path: `/api/users/${prefix}${escape}${rest}`,
    headers: { Cookie: adaCookie, ...json },
    body: method === "POST" ? JSON.stringify({ identityId: "github|8812" }) : undefined,
  }));

// A path parameter that decodes but is not a user ada may read (nor a segment URLs normalise away).
const badUserId = weirdString
  .filter((userId) => !["", ".", "..", "ada"].includes(userId) && userId.length < 5_000 && encodable(userId))
  .chain((userId) =>
    fc.constantFrom<BadRequest>(
      { method: "GET", path: `/api/users/${encodeURIComponent(userId)}`, headers: { Cookie: adaCookie } },
      {
        method: "POST",
        path: `/api/users/${encodeURIComponent(userId)}/primary`,
        headers: { Cookie: adaCookie, ...json },
        body: JSON.stringify({ identityId: "github|8812" }),
      },
    ),
  );

const notJson = fc.string().filter((text) => {
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
});
const jsonEndpoints = fc.constantFrom(
  { method: "POST", path: "/api/session" },
  { method: "POST", path: "/api/users/ada/primary" },
  { method: "PATCH", path: "/api/users/ada" },
  { method: "PUT", path: "/api/lab" },
  { method: "POST", path: "/api/lab/burst" },
  { method: "POST", path: "/api/lab/support/users/ada/primary" },
  { method: "POST", path: "/api/lab/relay/1/users/ada/primary" },
);
const malformedJson = fc
  .tuple(jsonEndpoints, notJson)
  .map(([endpoint, body]): BadRequest => ({ ...endpoint, headers: { Cookie: adaCookie, ...json }, body }));

const wrongContentType = fc
  .tuple(
    fc.constantFrom(
      { method: "POST", path: "/api/session" },
      { method: "DELETE", path: "/api/session" },
      { method: "POST", path: "/api/users/ada/primary" },
      { method: "PUT", path: "/api/lab" },
      { method: "POST", path: "/api/lab/reset" },
      { method: "POST", path: "/api/lab/burst" },
      { method: "POST", path: "/api/lab/relay/1/users/ada/primary" },
    ),
    fc.constantFrom(
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data",
      "application/xml",
      "text/json",
    ),
  )
  .map(([endpoint, contentType]): BadRequest => ({
    ...endpoint,
    headers: { Cookie: adaCookie, "Content-Type": contentType },
    body: JSON.stringify({ userId: "ada", identityId: "github|8812", strategy: "none", count: 1 }),
  }));

// Valid bodies, each spoiled by one field it does not know.
const validBodies = [
  { method: "POST", path: "/api/session", body: { userId: "ada" } },
  { method: "POST", path: "/api/users/ada/primary", body: { identityId: "github|8812" } },
  { method: "PUT", path: "/api/lab", body: { strategy: "none" } },
  { method: "POST", path: "/api/lab/burst", body: { userId: "ada", count: 1 } },
  { method: "PATCH", path: "/api/users/ada", body: { displayName: "Ada" } },
  { method: "POST", path: "/api/lab/support/users/ada/primary", body: { identityId: "github|8812" } },
  { method: "POST", path: "/api/lab/relay/1/users/ada/primary", body: { identityId: "github|8812" } },
];
const knownFields = new Set([
  "userId",
  "identityId",
  "identityIds",
  "count",
  "displayName",
  ...Object.keys(defaultLabSettings),
]);
const unknownField = fc
  .tuple(
    fc.constantFrom(...validBodies),
    fc.string({ minLength: 1 }).filter((key) => !knownFields.has(key)),
    wrongValue,
  )
  .map(([{ method, path, body }, key, value]): BadRequest => ({
    method,
    path,
    headers: { Cookie: adaCookie, ...json },
    body: JSON.stringify({ ...body, [key]: value ?? null }),
  }));

function isValidBurstValue(field: string, value: unknown): boolean {
  if (field === "count") return Number.isInteger(value) && Number(value) >= 1 && Number(value) <= 50;
  if (field === "identityIds")
    return (
      Array.isArray(value) &&
      value.length >= 1 &&
      value.length <= 50 &&
      value.every((id) => adasIdentities.includes(id))
    );
  return field === "userId" ? value === "ada" : adasIdentities.includes(value as string);
}

// Lone surrogates cannot be put in a URL at all.
function encodable(text: string): boolean {
  try {
    encodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

const isValidLabPatch = (patch: unknown) => labSettingsPatchSchema.safeParse(patch).success;
const labFields = Object.keys(defaultLabSettings);
const wrongType = fc.oneof(
  wrongValue
    .filter((userId) => !seedUsers.includes(userId as string))
    .map((userId): BadRequest => ({
      method: "POST",
      path: "/api/session",
      headers: json,
      body: JSON.stringify({ userId }),
    })),
  wrongValue
    .filter((identityId) => !adasIdentities.includes(identityId as string))
    .map((identityId): BadRequest => ({
      method: "POST",
      path: "/api/users/ada/primary",
      headers: { Cookie: adaCookie, ...json },
      body: JSON.stringify({ identityId }),
    })),
  fc
    .tuple(fc.constantFrom(...labFields), wrongValue)
    .map(([field, value]) => ({ [field]: value }))
    .filter((patch) => !isValidLabPatch(JSON.parse(JSON.stringify(patch))))
    .map((patch): BadRequest => ({ method: "PUT", path: "/api/lab", headers: json, body: JSON.stringify(patch) })),
  fc
    .tuple(fc.constantFrom("userId", "count", "identityId", "identityIds"), wrongValue)
    .filter(([field, value]) => value !== undefined && !isValidBurstValue(field, value))
    .map(([field, value]): BadRequest => ({
      method: "POST",
      path: "/api/lab/burst",
      headers: { Cookie: adaCookie, ...json },
      body: JSON.stringify({ userId: "ada", count: 1, [field]: value }),
    })),
);

const badQuery = fc
  .tuple(
    weirdString.filter((userId) => !/^[a-z][a-z0-9-]{0,62}$/.test(userId) && encodable(userId)),
    malformedEscape,
  )
  .chain(([userId, escape]) =>
    fc.constantFrom<BadRequest>(
      { method: "GET", path: `/api/lab/events?userId=${encodeURIComponent(userId)}`, headers: {} },
      { method: "GET", path: `/api/lab/events?userId=${escape}`, headers: {} },
      { method: "GET", path: `/api/lab/events?userId=${escape}&userId=ada`, headers: {} },
      { method: "GET", path: `/api/lab/timeline?userId=${encodeURIComponent(userId)}`, headers: {} },
      { method: "GET", path: `/api/lab/timeline?sinceMs=${encodeURIComponent(`${userId}x`)}`, headers: {} },
      { method: "POST", path: `/api/lab/experiments/${encodeURIComponent(userId)}/run`, headers: {} },
      { method: "GET", path: `/api/lab/holders?limit=${encodeURIComponent(`${userId}x`)}`, headers: {} },
      { method: "GET", path: `/api/lab/operations/${encodeURIComponent(userId)}/spans`, headers: {} },
    ),
  );

const badIdempotencyKey = fc
  .oneof(fc.constant(""), fc.string({ unit: headerSafe, minLength: 256, maxLength: 3_000 }))
  .map((key): BadRequest => ({
    method: "POST",
    path: "/api/users/ada/primary",
    headers: { Cookie: adaCookie, ...json, "Idempotency-Key": key },
    body: JSON.stringify({ identityId: "github|8812" }),
  }));

const uuid = fc.uuid();
const wrongCookie = fc
  .tuple(
    fc.oneof(
      fc.string({ unit: fc.constantFrom(..."abcXYZ019-_.:!~*'()[]{}@$&+=/?^`|%"), maxLength: 300 }),
      fc
        .tuple(uuid, fc.stringMatching(/^\d{1,12}$/), fc.string({ unit: headerSafe, maxLength: 60 }))
        .map((parts) => parts.join(".")),
      fc.constantFrom("ada.forged", `${adaValue}x`, "%FF", "..", "ada"),
    ),
    fc.constantFrom(
      { method: "GET", path: "/api/users/ada" },
      { method: "GET", path: "/api/session" },
      { method: "POST", path: "/api/users/ada/primary", body: JSON.stringify({ identityId: "github|8812" }) },
      { method: "POST", path: "/api/lab/burst", body: JSON.stringify({ userId: "ada", count: 1 }) },
    ),
  )
  .map(([value, endpoint]): BadRequest => ({ ...endpoint, headers: { Cookie: `lab_session=${value}`, ...json } }));

const crossSite = fc
  .tuple(
    fc.oneof(
      fc.webUrl().map((url): Record<string, string> => ({ Origin: new URL(url).origin })),
      fc.constantFrom<Record<string, string>>(
        { Origin: "null" },
        { "Sec-Fetch-Site": "cross-site" },
        { "Sec-Fetch-Site": "same-site" },
      ),
    ),
    fc.constantFrom(...validBodies),
  )
  .map(([headers, { method, path, body }]): BadRequest => ({
    method,
    path,
    headers: { Cookie: adaCookie, ...json, ...headers },
    body: JSON.stringify(body),
  }));

// Every method each route does not take (TRACE too, sent through node:http: fetch refuses it), and paths no
// route has.
const everyMethod = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"];
const routePaths = Object.keys(apiRouteMethods).map((route) =>
  route.replace("[userId]", "ada").replace("[peer]", "1").replace("[id]", "q3-ttl-too-short"),
);
const wrongMethod = fc
  .oneof(
    fc
      .tuple(fc.constantFrom(...routePaths), fc.constantFrom(...everyMethod))
      .filter(([path, method]) => !allowedMethods(path)!.includes(method)),
    fc.tuple(
      fc.constantFrom("/api/nowhere", "/api/users/ada/primary/x", "/api/lab/reset/now"),
      fc.constantFrom(...everyMethod),
    ),
  )
  .map(([path, method]): BadRequest => ({ method, path, headers: { Cookie: adaCookie } }));

// Bodies past the 64 KB limit, with their length or chunked: 413 before they are parsed.
const tooLarge = fc
  .tuple(fc.constantFrom(...validBodies), fc.integer({ min: 64 * 1024, max: 1024 * 1024 }), fc.boolean())
  .map(([{ method, path, body }, padding, chunked]): BadRequest => ({
    method,
    path,
    headers: { Cookie: adaCookie, ...json },
    body: JSON.stringify({ ...body, padding: "x".repeat(padding) }),
    chunked,
  }));

// JSON nested past the bound of a run file (64 arrays and objects) up to 32,000 deep (64 KB of brackets, under
// the body limit): in the open parts of a run file (its observed facts, a history entry's value, an identity's
// own fields), and in a field of every other JSON endpoint. Serialised again, 5,000 levels overflowed the stack.
const nestedJson = (depth: number, shape: "array" | "object") =>
  shape === "array" ? `${"[".repeat(depth)}0${"]".repeat(depth)}` : `${'{"a":'.repeat(depth)}0${"}".repeat(depth)}`;
const at = "2026-12-01T00:00:00.000Z";
const operationId = "00000000-0000-4000-8000-000000000001";
/**
 * Run files that import as they are, with `"<deep>"` where the nested JSON goes, `slot` deep in the file (the
 * file itself is one level).
 */
const runFiles = [
  { slot: 2, part: { observed: { facts: "<deep>" } } },
  {
    slot: 4,
    part: {
      history: [{ process: 0, type: "invoke", f: "switch", value: { to: "<deep>" }, at, operationId, label: "a" }],
    },
  },
  {
    slot: 7,
    part: {
      snapshots: [
        {
          at,
          accounts: [{ user_id: "u", identities: [{ provider: "github", user_id: "1", profile: "<deep>" }] }],
          localPrimaryIdentityId: null,
          lease: null,
          audit: null,
        },
      ],
    },
  },
].map(({ slot, part }) => ({
  slot,
  file: {
    experimentId: "f4-race-to-acquire",
    startedAt: at,
    endedAt: at,
    verdict: "as-expected",
    explanation: "",
    steps: [],
    variants: [],
    lanes: [],
    history: [],
    snapshots: [],
    observed: {},
    ...part,
  },
}));
/** `file` with JSON nested `depth` deep in place of `"<deep>"`. */
const nestedIn = (file: object, depth: number, shape: "array" | "object" = "array") =>
  JSON.stringify(file).replace('"<deep>"', nestedJson(depth, shape));
const tooDeep = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(...runFiles).map(({ file }) => ({ method: "POST", path: "/api/lab/runs", file })),
      fc.constantFrom(...validBodies).map(({ method, path, body }) => ({
        method,
        path,
        file: Object.fromEntries(
          Object.entries(body).map(([key, value], index) => [key, index === 0 ? "<deep>" : value]),
        ),
      })),
    ),
    fc.integer({ min: 65, max: 32_000 }),
    fc.constantFrom("array" as const, "object" as const),
  )
  .map(([{ method, path, file }, depth, shape]): BadRequest => ({
    method,
    path,
    headers: { Cookie: adaCookie, ...json },
    // An object level takes 6 bytes: 12,000 of them fill 64 KB.
    body: nestedIn(file, shape === "object" ? Math.min(depth, 10_000) : depth, shape),
  }));

// Text PostgreSQL cannot store (a NUL character, half a surrogate pair), in a value or a key of a body that is
// otherwise valid: refused before any route acts on it (a rename had called the provider before its save failed).
const unstorable = fc.constantFrom("\u0000", "\ud800", "\udc00", "a\u0000b", "x\udbffy");
const unstorableText = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(...validBodies),
      fc.constantFrom(...runFiles).map(({ file }) => ({ method: "POST", path: "/api/lab/runs", body: file })),
    ),
    unstorable,
    fc.boolean(),
  )
  .map(([{ method, path, body }, text, inAKey]): BadRequest => {
    const [field, value] = Object.entries(body)[0]!;
    const spoiled = inAKey
      ? { ...body, [`${field}${text}`]: value }
      : { ...body, [field]: typeof value === "string" ? `${value}${text}` : text };
    return { method, path, headers: { Cookie: adaCookie, ...json }, body: JSON.stringify(spoiled) };
  });

// The writes that take no body, sent one: not JSON, a field (any is unknown), or too long and chunked.
const bodylessWrites = [
  { method: "POST", path: "/api/lab/reset" },
  { method: "POST", path: "/api/lab/reconcile" },
  { method: "DELETE", path: "/api/session" },
  { method: "POST", path: "/api/lab/experiments/q3-ttl-too-short/run" },
];
const bodyOnABodylessWrite = fc
  .tuple(
    fc.constantFrom(...bodylessWrites),
    fc.oneof(
      notJson.filter((text) => text.length > 0).map((body) => ({ body, chunked: false })),
      fc
        .tuple(fc.string({ minLength: 1 }), wrongValue)
        .map(([key, value]) => ({ body: JSON.stringify({ [key]: value ?? null }), chunked: false })),
      fc
        .integer({ min: 64 * 1024, max: 256 * 1024 })
        .map((length) => ({ body: JSON.stringify({ padding: "x".repeat(length) }), chunked: true })),
    ),
  )
  .map(([endpoint, { body, chunked }]): BadRequest => ({
    ...endpoint,
    headers: { Cookie: adaCookie, ...json },
    body,
    chunked,
  }));

const badRequest = fc.oneof(
  badPath,
  badUserId,
  malformedJson,
  wrongContentType,
  unknownField,
  wrongType,
  badQuery,
  badIdempotencyKey,
  wrongCookie,
  crossSite,
  wrongMethod,
  tooLarge,
  tooDeep,
  unstorableText,
  bodyOnABodylessWrite,
);

/** fetch refuses to send TRACE (the fetch standard forbids it): node:http sends it. */
async function send({ method, path, headers, body, chunked }: BadRequest): Promise<{ status: number }> {
  if (method === "TRACE") return rawRequest(appUrl, { method, path, headers, body });
  // A stream has no length: fetch sends it chunked (and needs `duplex` for it).
  const init: RequestInit & { duplex: "half" } = {
    method,
    headers,
    body: chunked ? new Blob([body!]).stream() : body,
    duplex: "half",
  };
  const response = await fetch(`${appUrl}${path}`, init);
  await response.arrayBuffer();
  return response;
}

it("1,200 generated bad requests across every endpoint: all 4xx, none 5xx, and nothing changes", async () => {
  const before = await observableState();
  let requests = 0;
  await fc.assert(
    fc.asyncProperty(badRequest, async ({ method, path, headers, body, chunked }) => {
      const sentHeaders: Record<string, string> = { ...headers };
      if (sentHeaders.Cookie) sentHeaders.Cookie = sentHeaders.Cookie.replace(adaValue, adaSessionValue);
      const response = await send({ method, path, headers: sentHeaders, body, chunked });
      expect(
        response.status,
        `${method} ${path} ${JSON.stringify(headers)} ${body?.slice(0, 200)}`,
      ).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      // A sample of the runs checks that nothing changed so far.
      if (++requests % 200 === 0) expect(await observableState()).toEqual(before);
    }),
    { numRuns: 1_200 },
  );
  expect(await observableState()).toEqual(before);
}, 120_000);

it("a run file nests at most 64 deep: 64 imports, 65 and 5,000 are 400s naming the body, and save nothing", async () => {
  // The whole file 64 deep: each slot's JSON fills the levels left under it.
  for (const { slot, file } of runFiles) {
    const imported = await app.post("/api/lab/runs", JSON.parse(nestedIn(file, 64 - slot)));
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
  }
  const before = await observableState();
  for (const { slot, file } of runFiles)
    for (const depth of [65 - slot, 5_000]) {
      const refused = await fetch(`${appUrl}/api/lab/runs`, {
        method: "POST",
        headers: json,
        body: nestedIn(file, depth),
      });
      expect(refused.status).toBe(400);
      expect((await refused.json()).errors).toEqual([
        { field: "body", message: "must nest arrays and objects at most 64 deep" },
      ]);
    }
  expect(await observableState()).toEqual(before);
});
