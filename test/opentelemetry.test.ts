/**
 * The app's OpenTelemetry export, end to end: the built app (the product's switch, lab off) sends OTLP/HTTP to a
 * tiny receiver in this test (traces in JSON, metrics in protobuf), and one switch is one trace: the route's span,
 * the lease's acquire, checkpoints and release, and the two provider calls, with the attributes lib/lease/README.md
 * and docs/production.md document. Without OTEL_EXPORTER_OTLP_ENDPOINT the app loads no SDK: it exports nothing even
 * where the signal-specific endpoints point at the receiver (they would be used by any SDK that was loaded).
 */
import { EventEmitter, once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDb } from "../db/connection";
import { startApp, type RunningApp } from "./harness/app-server";
import { appClient } from "./harness/http-client";

/** An OTLP attribute as the JSON encoding spells it. */
interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  attributes: OtlpAttribute[];
}
interface Export {
  path: string;
  contentType: string;
  raw: Buffer;
  body: {
    resourceSpans?: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
  };
}

const spanKind = { server: 2, client: 3 };

/** The attributes as a plain object; integers as numbers. */
const attributesOf = (attributes: OtlpAttribute[]) =>
  Object.fromEntries(
    attributes.map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue === undefined ? (value.boolValue ?? value.doubleValue) : Number(value.intValue)),
    ]),
  );

/** A collector of one's own: every export it receives, answered 200, and a way to await one that matters. */
async function otlpReceiver() {
  const received: Export[] = [];
  const arrivals = new EventEmitter();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const contentType = request.headers["content-type"] ?? "";
      const raw = Buffer.concat(chunks);
      const json = contentType.startsWith("application/json");
      received.push({ path: request.url ?? "", contentType, raw, body: json ? JSON.parse(raw.toString("utf8")) : {} });
      // An empty response of the request's own encoding: `{}`, or the empty protobuf message (no bytes).
      response.writeHead(200, { "Content-Type": contentType }).end(json ? "{}" : undefined);
      arrivals.emit("export");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    /** Resolves once `found` answers something for what has arrived (checked at each arrival), else fails. */
    async until<T>(found: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
      const deadline = AbortSignal.timeout(timeoutMs);
      for (;;) {
        const result = found();
        if (result !== undefined) return result;
        await once(arrivals, "export", { signal: deadline }).catch(() => {
          throw new Error(`no ${what} within ${timeoutMs} ms; received ${received.map((each) => each.path)}`);
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The spans an exporting app sent (to its endpoint's `/v1/traces`, under `prefix`). */
const spansOf = (received: Export[], prefix = "") =>
  received
    .filter(({ path }) => path === `${prefix}/v1/traces`)
    .flatMap(({ body }) =>
      (body.resourceSpans ?? []).flatMap(({ resource, scopeSpans }) =>
        scopeSpans.flatMap(({ spans }) =>
          spans.map((span) => ({
            ...span,
            attrs: attributesOf(span.attributes),
            resource: attributesOf(resource.attributes),
          })),
        ),
      ),
    );

const routeSpanName = "POST /api/users/[userId]/primary";
/** What a switch's trace holds of ours once it has ended: the lease's release is its last span. */
const switchSpans = ["lease.acquire", "lease.checkpoint", "provider.unlink", "provider.link", "lease.release"];

let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
let exporting: RunningApp;
let silent: RunningApp;
let labOn: RunningApp;
const databaseUrl = inject("databaseUrl");
const { db } = createDb(databaseUrl, 1);

beforeAll(async () => {
  receiver = await otlpReceiver();
  // Short delays, so that what an SDK would send arrives within the test.
  const quick = { LAB_ENABLED: "false", OTEL_BSP_SCHEDULE_DELAY: "100", OTEL_METRIC_EXPORT_INTERVAL: "200" };
  exporting = await startApp({
    databaseUrl,
    port: Number(process.env.NO_LAB_APP_PORT ?? 3215),
    env: {
      ...quick,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      // Traces in JSON, read here; metrics in the default encoding, protobuf.
      OTEL_EXPORTER_OTLP_PROTOCOL: "",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
    },
  });
  // The lab's own lease guard (under `lease`, the default strategy) runs through the same observed lease.
  labOn = await startApp({
    databaseUrl,
    port: Number(process.env.CRASH_APP_PORT ?? 3217),
    env: {
      ...quick,
      LAB_ENABLED: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/lab`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    },
  });
  silent = await startApp({
    databaseUrl,
    port: Number(process.env.PEER_APP_PORT ?? 3216),
    env: {
      ...quick,
      OTEL_EXPORTER_OTLP_ENDPOINT: "",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/silent/v1/traces`,
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/silent/v1/metrics`,
    },
  });
});

afterAll(async () => {
  await Promise.all([exporting?.stop(), silent?.stop(), labOn?.stop()]);
  await receiver?.close();
  await db.destroy();
});

describe("OpenTelemetry over OTLP/HTTP", () => {
  it("one switch is one trace: route, acquire, unlink, link, the save's checkpoint, release; table, id, fence, outcome", async () => {
    // First the app without an endpoint, so that anything it sent would arrive before the exporting app's spans.
    const alan = await appClient(silent.baseUrl).signedIn("alan");
    expect((await alan.promote("alan", "apple|000912.alan")).status).toBe(200);

    const grace = await appClient(exporting.baseUrl).signedIn("grace");
    const answer = await grace.promote("grace", "auth0|grace-email");
    expect(answer.status).toBe(200);
    const { operationId } = answer.body as { operationId: string };

    const trace = await receiver.until(() => {
      const spans = spansOf(receiver.received);
      const route = spans.find((span) => span.name === routeSpanName && span.attrs["http.status_code"] === 200);
      const inTrace = spans.filter((span) => span.traceId === route?.traceId);
      return switchSpans.every((name) => inTrace.some((span) => span.name === name))
        ? { route: route!, inTrace }
        : undefined;
    }, "switch trace");

    const { route, inTrace } = trace;
    expect(route.kind).toBe(spanKind.server);
    expect(route.parentSpanId ?? "").toBe("");
    expect(route.attrs).toMatchObject({ "http.method": "POST", "http.route": "/api/users/[userId]/primary" });
    expect(route.resource["service.name"]).toBe("lease-lock-lab");

    // Every span of ours hangs under the route's span, through its parents, in this one trace.
    const byId = new Map(inTrace.map((span) => [span.spanId, span]));
    const underRoute = (span: OtlpSpan): boolean =>
      span.spanId === route.spanId ||
      (!!span.parentSpanId && !!byId.get(span.parentSpanId) && underRoute(byId.get(span.parentSpanId)!));
    const ours = inTrace
      .filter((span) => switchSpans.includes(span.name))
      .sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
    for (const span of ours) expect(underRoute(span), `${span.name} under the route`).toBe(true);

    expect(
      ours.map((span) => [
        span.name,
        span.attrs["lease.step"] ?? null,
        span.attrs["lease.outcome"] ?? span.attrs["provider.outcome"],
      ]),
    ).toEqual([
      ["lease.acquire", null, "won"],
      ["lease.checkpoint", "unlink", "held"],
      ["provider.unlink", null, "ok"],
      ["lease.checkpoint", "link", "held"],
      ["provider.link", null, "ok"],
      ["lease.checkpoint", "save", "held"],
      ["lease.release", null, "released"],
    ]);

    const { fence } = await db
      .selectFrom("users")
      .select("identity_action_fence as fence")
      .where("id", "=", "grace")
      .executeTakeFirstOrThrow();
    for (const span of ours.filter(({ name }) => name.startsWith("lease.")))
      expect(span.attrs, span.name).toMatchObject({
        "lease.table": "users",
        "lease.row_id": "grace",
        "lease.fence": String(fence),
      });
    expect(ours[0]!.attrs["lease.expires_at"]).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(ours[6]!.attrs["lease.release.with_write"]).toBe(true);
    for (const span of ours.filter(({ name }) => name.startsWith("provider.")))
      expect({ kind: span.kind, ...span.attrs }, span.name).toMatchObject({
        kind: spanKind.client,
        "operation.id": operationId,
        "lease.fence": String(fence),
        "provider.account_id": expect.stringMatching(/\|/),
        "provider.identity_id": expect.stringMatching(/\|/),
      });

    // The lease's metrics go out too, in protobuf (its strings are its bytes): the name and the unit.
    const metricsExport = await receiver.until(
      () => receiver.received.find(({ path, raw }) => path === "/v1/metrics" && raw.includes("lease.acquisitions")),
      "lease.acquisitions metric",
    );
    expect(metricsExport.contentType).toBe("application/x-protobuf");
    expect(metricsExport.raw.includes("{acquisition}")).toBe(true);
    expect(
      new Set(receiver.received.filter(({ path }) => path === "/v1/traces").map((each) => each.contentType)),
    ).toEqual(new Set(["application/json"]));

    // The app without OTEL_EXPORTER_OTLP_ENDPOINT switched first, and sent nothing.
    expect(receiver.received.map(({ path }) => path).filter((path) => path.startsWith("/silent"))).toEqual([]);
  });

  it("with the lab on, a switch under its lease strategy gives the same lease spans, in one trace", async () => {
    const ada = await appClient(labOn.baseUrl).signedIn("ada");
    const answer = await ada.promote("ada", "github|8812");
    expect(answer.status).toBe(200);
    // The lab's memory of spans (its waterfall's) sits beside the exporter: the same switch, read back from it.
    const remembered = await ada.get(`/api/lab/operations/${answer.body.operationId}/spans`);
    expect(remembered.status).toBe(200);
    expect(remembered.body.spans.map((span: { name: string }) => span.name)).toEqual(
      expect.arrayContaining(["switch", ...switchSpans]),
    );
    const names = await receiver.until(() => {
      const spans = spansOf(receiver.received, "/lab");
      const route = spans.find((span) => span.name === routeSpanName && span.attrs["http.status_code"] === 200);
      const inTrace = spans.filter((span) => span.traceId === route?.traceId).map((span) => span.name);
      return switchSpans.every((name) => inTrace.includes(name)) ? inTrace : undefined;
    }, "lab-on switch trace");
    expect(names.filter((name) => name === "lease.checkpoint")).toHaveLength(3);
  });
});
