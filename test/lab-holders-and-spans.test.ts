/**
 * Two of the lab's views over real HTTP: who holds what (`GET /api/lab/holders`, the lease's `holders()` with the
 * database's time of the read) and a switch's spans (`GET /api/lab/operations/{id}/spans`, the lab's memory of
 * finished spans, registered without any OTLP endpoint).
 */
import { describe, expect, inject, it } from "vitest";
import type { HoldersView } from "../lib/lab/holders";
import type { SpanView } from "../lib/lab/recent-spans";
import { freshLabEachTest } from "./fresh-lab";
import { openEventStream } from "./harness/event-stream";

const { app, session } = freshLabEachTest();

const holders = async () => {
  const answer = await app.get<HoldersView>("/api/lab/holders");
  expect(answer.status).toBe(200);
  return answer.body;
};

const routeSpan = "POST /api/users/[userId]/primary";
const spansOf = (operationId: string) =>
  app.get<{ operationId: string; spans: SpanView[] }>(`/api/lab/operations/${operationId}/spans`);

/** An answered operation's spans, read once: the read waits for the last of them (the route's ends after the answer). */
async function finishedSpans(operationId: string): Promise<SpanView[]> {
  const answer = await spansOf(operationId);
  expect(answer.status).toBe(200);
  return answer.body.spans;
}

const described = (span: SpanView) =>
  [span.name, span.attributes["lease.step"] ?? span.attributes["lease.outcome"] ?? span.attributes["provider.outcome"]]
    .filter((part) => part !== undefined)
    .join(" ");

describe("GET /api/lab/holders", () => {
  it("lists the one holder of two concurrent switches while it holds, with its fence and the read's time; then nobody", async () => {
    expect((await holders()).holders).toEqual([]);
    await app.configure({ provider: { latencyMs: 1_500 } });
    const answers = Promise.all([
      session.ada.promote("ada", "github|8812"),
      session.ada.promote("ada", "auth0|ada-email"),
    ]);
    await expect.poll(async () => (await holders()).holders.length, { timeout: 5_000, interval: 50 }).toBe(1);
    const seen = await holders();
    expect(seen.holders).toEqual([
      {
        userId: "ada",
        lockedAt: expect.any(String),
        expiresAt: expect.any(String),
        fence: "1",
        remainingMs: expect.any(Number),
      },
    ]);
    const [holder] = seen.holders;
    expect(Date.parse(holder!.expiresAt)).toBeGreaterThan(Date.parse(seen.readAt));
    expect(Date.parse(holder!.lockedAt!)).toBeLessThanOrEqual(Date.parse(seen.readAt));
    expect(seen.more).toBe(false);

    expect((await answers).map((answer) => answer.status).sort()).toEqual([200, 409]);
    expect((await holders()).holders).toEqual([]);
  });

  it("refuses a limit that is not an integer from 1 to 100 with a problem", async () => {
    for (const limit of ["0", "101", "2.5", "many"]) {
      const answer = await app.get(`/api/lab/holders?limit=${limit}`);
      expect(answer.status, limit).toBe(400);
      expect(answer.headers.get("content-type")).toBe("application/problem+json");
    }
    expect((await app.get("/api/lab/holders?limit=1")).status).toBe(200);
  });
});

describe("GET /api/lab/operations/{id}/spans", () => {
  it("gives a switch's finished spans in order, under its route's, timed from the first", async () => {
    await app.configure({ provider: { latencyMs: 50 } });
    const stream = await openEventStream(`${inject("appUrl")}/api/lab/stream`);
    let spans: SpanView[];
    let operationId: string;
    try {
      await stream.waitFor((message) => message.event === "caught-up");
      const answering = session.ada.promote("ada", "github|8812");
      // Read as the page reads them: on the stream's answered lane, which comes before the answer has gone, and
      // before the switch's span and the route's have ended.
      const answered = await stream.waitFor(
        (message) => message.event === "operation" && message.data.userId === "ada" && message.data.answeredAt,
      );
      operationId = answered.data.operationId;
      spans = await finishedSpans(operationId);
      const answer = await answering;
      expect(answer.status).toBe(200);
      expect(answer.body.operationId).toBe(answered.data.operationId);
    } finally {
      stream.close();
    }

    const ours = spans.filter((span) => span.name === routeSpan || !span.name.includes(" "));
    expect(ours.map(described)).toEqual([
      routeSpan,
      "switch",
      "lease.acquire won",
      "lease.checkpoint unlink",
      "provider.unlink ok",
      "lease.checkpoint link",
      "provider.link ok",
      "lease.checkpoint save",
      "lease.release released",
    ]);
    expect(spans[0]!.name).toBe(routeSpan);
    expect(spans[0]!.startMs).toBe(0);
    expect(spans[0]!.parent).toBeNull();
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const switchSpan = spans.find((span) => span.name === "switch")!;
    expect(switchSpan.attributes["operation.id"]).toBe(operationId);
    for (const span of spans.slice(1)) {
      // Each hangs under one shown, and lies within its parent's time (starts are whole milliseconds: 1 ms apart).
      const parent = byId.get(span.parent!)!;
      expect(parent, span.name).toBeDefined();
      expect(span.startMs).toBeGreaterThanOrEqual(parent.startMs);
      expect(span.startMs + span.durationMs).toBeLessThanOrEqual(parent.startMs + parent.durationMs + 1);
    }
    const unlink = spans.find((span) => span.name === "provider.unlink")!;
    // At least the provider's latency, less 1 ms: its timer runs on its event loop's whole-millisecond clock, and
    // the span once measured 49.68 ms (a clean clone's full run of de25c71).
    expect(unlink.durationMs).toBeGreaterThanOrEqual(49);
  });

  it("keeps a switch's spans however many page reads follow: a read records none", async () => {
    await app.configure({ provider: { latencyMs: 20 } });
    const answer = await session.ada.promote("ada", "github|8812");
    const before = await finishedSpans(answer.body.operationId);
    // 300 reads: at Next.js's two spans each, 600, more than the 500 the lab remembers.
    for (let read = 0; read < 300; read++) expect((await session.ada.get("/api/users/ada")).status).toBe(200);
    expect((await spansOf(answer.body.operationId)).body.spans).toEqual(before);
    // A UUID in upper case names the same operation.
    const upper = await spansOf(answer.body.operationId.toUpperCase());
    expect(upper.status).toBe(200);
    expect(upper.body).toEqual({ operationId: answer.body.operationId, spans: before });
  });

  it("gives a refused switch its refused acquisition; 404 for an operation it has no span of, 400 for a malformed id", async () => {
    // The second must arrive while the first holds the lease, however far apart a loaded machine sends them.
    await app.configure({ provider: { latencyMs: 1_500 } });
    const [first, second] = await Promise.all([
      session.ada.promote("ada", "github|8812"),
      session.ada.promote("ada", "auth0|ada-email"),
    ]);
    const refused = [first, second].find((answer) => answer.status === 409)!;
    expect(refused).toBeDefined();
    const lanes = (await app.get("/api/lab/timeline?userId=ada")).body.operations as {
      operationId: string;
      status: number;
    }[];
    const refusedLane = lanes.find((lane) => lane.status === 409)!;
    const spans = await finishedSpans(refusedLane.operationId);
    expect(spans.filter((span) => !span.name.includes(" ")).map(described)).toEqual([
      "switch",
      "lease.acquire refused",
    ]);

    const unknown = await spansOf("00000000-0000-4000-8000-000000000000");
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toBe("application/problem+json");
    expect((unknown.body as unknown as { type: string }).type).toMatch(/\/spans-not-found$/);
    expect((await spansOf("not-an-id")).status).toBe(400);
  });
});
