import http from "node:http";
import net from "node:net";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { appClient, type AppClient } from "./harness/http-client";

const appUrl = inject("appUrl");
const app = appClient(appUrl);
let ada: AppClient;

beforeAll(async () => {
  await app.reset();
  ada = await app.signedIn("ada");
});

const expectProblem = (answer: { status: number; headers: Headers; body: any }, status: number, type: string) => {
  expect(answer.status).toBe(status);
  expect(answer.headers.get("content-type")).toBe("application/problem+json");
  expect(answer.body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
  expect(answer.body.type).toMatch(new RegExp(`/${type}$`));
};

describe("CSRF: a browser's request that changes state must come from the app itself", () => {
  it.each([
    ["Origin of another site", { Origin: "https://evil.example" }],
    ["Origin of another port", { Origin: new URL(appUrl).origin.replace(/:\d+$/, ":1") }],
    ["Origin null (an opaque origin)", { Origin: "null" }],
    ["Sec-Fetch-Site: cross-site", { "Sec-Fetch-Site": "cross-site" }],
    ["Sec-Fetch-Site: same-site", { "Sec-Fetch-Site": "same-site" }],
    ["same Origin, but Sec-Fetch-Site: cross-site", { Origin: appUrl, "Sec-Fetch-Site": "cross-site" }],
  ])("%s → 403, and nothing changes", async (_, headers) => {
    await app.configure({ strategy: "lease" });
    const answers = [
      await app.call("PUT", "/api/lab", { strategy: "none" }, headers),
      await ada.call("POST", "/api/users/ada/primary", { identityId: "github|8812" }, headers),
      await app.call("POST", "/api/session", { userId: "grace" }, headers),
      await ada.call("DELETE", "/api/session", undefined, headers),
      await app.call("POST", "/api/lab/reset", undefined, headers),
    ];
    for (const answer of answers) expectProblem(answer, 403, "csrf");
    expect((await app.get("/api/lab")).body.strategy).toBe("lease");
    expect((await ada.get("/api/users/ada")).body.primaryIdentityId).toBe("google-oauth2|104423");
  });

  it.each([
    ["no Origin and no Sec-Fetch-Site (a script)", {}],
    ["its own Origin", { Origin: appUrl }],
    ["Sec-Fetch-Site: same-origin", { Origin: appUrl, "Sec-Fetch-Site": "same-origin" }],
    ["Sec-Fetch-Site: none (typed in the address bar)", { "Sec-Fetch-Site": "none" }],
  ])("%s → allowed", async (_, headers) => {
    expect((await app.call("PUT", "/api/lab", { strategy: "lease" }, headers)).status).toBe(200);
    expect((await app.call("POST", "/api/lab/reset", undefined, headers)).status).toBe(204);
  });

  it("reads are not refused: a cross-site GET changes nothing", async () => {
    expect((await app.call("GET", "/api/users", undefined, { "Sec-Fetch-Site": "cross-site" })).status).toBe(200);
  });
});

describe("a body must be JSON", () => {
  it.each([
    ["text/plain", "text/plain"],
    ["a form", "application/x-www-form-urlencoded"],
    ["multipart", "multipart/form-data; boundary=x"],
    ["JSON's cousin", "application/jsonp"],
  ])("%s → 415, and nothing changes", async (_, contentType) => {
    const body = JSON.stringify({ strategy: "none" });
    const answer = await app.call("PUT", "/api/lab", body, { "Content-Type": contentType });
    expectProblem(answer, 415, "unsupported-media-type");
    expect((await app.get("/api/lab")).body.strategy).toBe("lease");
  });

  it("a body without any Content-Type → 415", async () => {
    const response = await fetch(`${appUrl}/api/session`, { method: "POST", body: new Blob(['{"userId":"ada"}']) });
    expect(response.status).toBe(415);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
  });

  it("application/json with a charset is JSON; a POST and a DELETE without a body need no Content-Type", async () => {
    expect(
      (await app.call("PUT", "/api/lab", { strategy: "lease" }, { "Content-Type": "application/json; charset=utf-8" }))
        .status,
    ).toBe(200);
    expect((await fetch(`${appUrl}/api/lab/reset`, { method: "POST" })).status).toBe(204);
    expect((await fetch(`${appUrl}/api/session`, { method: "DELETE" })).status).toBe(204);
  });
});

describe("a malformed path (bad percent-encoding) is a 400 naming the field", () => {
  it.each([
    ["GET", "/api/users/%FF", "userId"],
    ["GET", "/api/users/%E0%A4%A", "userId"],
    ["GET", "/api/users/%", "userId"],
    ["PATCH", "/api/users/%C0%AF", "userId"],
    ["POST", "/api/users/%FF/primary", "userId"],
    ["GET", "/api/lab/%FF", "path"],
  ])("%s %s → 400", async (method, path, field) => {
    const answer = await ada.call(method, path, method === "GET" ? undefined : { identityId: "github|8812" });
    expectProblem(answer, 400, "validation");
    expect(answer.body.errors).toEqual([{ field, message: expect.stringContaining("percent-encoding") }]);
  });
});

describe("what Node's HTTP parser refuses is a problem too, not a bare status line", () => {
  /** Sends `head` as it is (no client would send it) and reads the whole answer until the server closes. */
  function rawExchange(head: string): Promise<{ status: number; headers: Headers; body: any }> {
    const { hostname, port } = new URL(appUrl);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => socket.write(head));
      const chunks: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => chunks.push(chunk));
      socket.on("error", reject);
      socket.on("close", () => {
        const [top = "", body = ""] = Buffer.concat(chunks).toString().split("\r\n\r\n");
        const [statusLine = "", ...lines] = top.split("\r\n");
        const headers = new Headers(lines.map((line) => line.split(/:\s*/, 2) as [string, string]));
        resolve({ status: Number(statusLine.split(" ")[1]), headers, body: body ? JSON.parse(body) : null });
      });
    });
  }

  it("a control character in a header → 400", async () => {
    const answer = await rawExchange("GET /api/users HTTP/1.1\r\nHost: lab\r\nX-Note: a\x01b\r\n\r\n");
    expectProblem(answer, 400, "unreadable-request");
  });

  it("headers past Node's 16 KB → 431", async () => {
    const answer = await rawExchange(`GET /api/users HTTP/1.1\r\nHost: lab\r\nX-Note: ${"x".repeat(20_000)}\r\n\r\n`);
    expectProblem(answer, 431, "unreadable-request");
  });

  it("/api itself is an API path no route has → 404 problem", async () => {
    expectProblem(await app.get("/api"), 404, "not-found");
  });
});

describe("a body over 64 KB is a 413, refused before it is read through", () => {
  const limit = 64 * 1024;

  /** Sends the headers and `sent` of the body, never the rest, and resolves with the answer that comes anyway. */
  function answerBeforeTheBodyEnds(headers: Record<string, string>, sent: string) {
    return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }>((resolve, reject) => {
      const request = http.request(`${appUrl}/api/lab`, {
        method: "PUT",
        headers: { "Content-Type": "application/json", ...headers },
      });
      request.on("error", reject);
      request.on("response", (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          resolve({
            status: response.statusCode!,
            headers: response.headers,
            body: JSON.parse(Buffer.concat(chunks).toString()),
          });
          request.destroy();
        });
      });
      request.write(sent);
    });
  }

  it("a Content-Length over the limit → 413 at once, before a byte of the body is sent", async () => {
    const answer = await answerBeforeTheBodyEnds({ "Content-Length": String(8 * 1024 * 1024) }, "");
    expect(answer.status).toBe(413);
    expect(answer.headers["content-type"]).toBe("application/problem+json");
    expect(answer.body).toMatchObject({ status: 413, limitBytes: limit });
    expect(answer.body.type).toMatch(/\/payload-too-large$/);
    expect((await app.get("/api/lab")).body.strategy).toBe("lease");
  });

  it("a chunked body without a length → 413 as soon as it passes the limit, while the rest is still unsent", async () => {
    const answer = await answerBeforeTheBodyEnds(
      { "Transfer-Encoding": "chunked" },
      `{"strategy":"none","padding":"${"x".repeat(limit)}`,
    );
    expect(answer.status).toBe(413);
    expect(answer.body.type).toMatch(/\/payload-too-large$/);
    expect((await app.get("/api/lab")).body.strategy).toBe("lease");
  });

  it("an 8 MB JSON document → 413, not parsed (the same body under the limit is read: 400 for its unknown field)", async () => {
    const big = await app.put("/api/lab", { strategy: "none", padding: "x".repeat(8 * 1024 * 1024) });
    expect(big.status).toBe(413);
    const small = await app.put("/api/lab", { strategy: "none", padding: "x".repeat(limit - 100) });
    expect(small.status).toBe(400);
    expect(small.body.errors.map((error: { field: string }) => error.field)).toEqual(["body.padding"]);
    expect((await app.get("/api/lab")).body.strategy).toBe("lease");
  });
});
