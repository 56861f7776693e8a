/**
 * A tiny checkout for the kit's own tests: one "Pay" button that POSTs /pay. The racy server checks
 * "already paid?" and charges after a pause, as a read-then-write does; the safe one claims the order in
 * the same step as the check. Each reads the whole request first, as a server that parses its body does. It
 * counts what the kit must see: arrivals (when, over which protocol and connection), charges, requests in flight.
 * Over `h2`: TLS (a certificate made for it by `openssl`), HTTP/2 for whoever offers it, HTTP/1.1 otherwise;
 * over `h2c`: plain HTTP/1.1 and HTTP/2 with prior knowledge on one port, told apart by the connection's preface.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  createServer as createH2cServer,
  createSecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
} from "node:http2";
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export interface Arrival {
  /** The actor number the page was opened with (`?actor=`). */
  actor: number;
  /** The browser's `shopper` cookie: one per browser context. */
  shopper: string;
  /** When the whole request was in: epoch ms, to the microsecond (this process's clock). */
  at: number;
  /** "1.1" or "2.0". */
  httpVersion: string;
  /** The client's port: one per connection. */
  connection: number;
  /** How many /pay requests had begun (their headers in) when this one was whole, itself included. */
  begun: number;
}

export interface Checkout {
  url: string;
  arrivals: Arrival[];
  charges: () => number;
  /** The most /pay requests the server was answering at one time. */
  maxInFlight: () => number;
  close: () => Promise<void>;
}

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Checkout</title></head>
<body>
  <button type="button" id="pay">Pay</button>
  <output id="answer" data-sent="0" data-answered="0"></output>
  <script>
    const params = new URLSearchParams(location.search);
    const guarded = params.get("guard") === "on";
    const button = document.getElementById("pay");
    const answer = document.getElementById("answer");
    let pending = false;
    button.addEventListener("click", async () => {
      if (guarded) {
        if (pending) return;
        pending = true;
        button.disabled = true;
      }
      answer.dataset.sent = String(Number(answer.dataset.sent) + 1);
      const response = await fetch("/pay" + location.search, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ order: "A-1" }),
      });
      answer.dataset.answered = String(Number(answer.dataset.answered) + 1);
      answer.textContent = response.status === 200 ? "Paid" : "Refused (" + response.status + ")";
    });
  </script>
</body></html>`;

/**
 * What the checkout speaks: `http/1.1`; `h2`: HTTP/2 over TLS, as a browser speaks it too (its contexts need
 * `ignoreHTTPSErrors`); `h2c`: HTTP/1.1 to a browser, HTTP/2 to a client that opens with HTTP/2's preface.
 */
export type Protocol = "http/1.1" | "h2" | "h2c";

/** Starts a checkout on a free loopback port. `safe`: claim the order atomically; `pauseMs`: the charge's pause. */
export async function startCheckout({
  safe = false,
  pauseMs = 150,
  protocol = "http/1.1" as Protocol,
} = {}): Promise<Checkout> {
  const arrivals: Arrival[] = [];
  let charges = 0;
  let claimed = false;
  let inFlight = 0;
  let maxInFlight = 0;
  let begun = 0;

  const handle = async (
    request: IncomingMessage | Http2ServerRequest,
    response: ServerResponse | Http2ServerResponse,
  ) => {
    const url = new URL(request.url ?? "/", "http://checkout");
    if (request.method === "GET" && url.pathname === "/") {
      const cookie = request.headers.cookie?.includes("shopper=") ? {} : { "set-cookie": `shopper=${randomUUID()}` };
      response.writeHead(200, { "content-type": "text/html; charset=utf-8", ...cookie }).end(page);
      return;
    }
    if (request.method !== "POST" || url.pathname !== "/pay") {
      response.writeHead(404).end();
      return;
    }
    begun++;
    for await (const chunk of request) void chunk;
    arrivals.push({
      actor: Number(url.searchParams.get("actor") ?? -1),
      shopper: /shopper=([^;]+)/.exec(request.headers.cookie ?? "")?.[1] ?? "",
      at: performance.timeOrigin + performance.now(),
      httpVersion: request.httpVersion,
      connection: request.socket.remotePort ?? 0,
      begun,
    });
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    const refuse = safe ? claimed : charges > 0;
    if (!refuse) claimed = true;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    if (!refuse) charges++;
    inFlight--;
    response.writeHead(refuse ? 409 : 200, { "content-type": "application/json" });
    response.end(JSON.stringify(refuse ? { error: "already paid" } : { paid: true }));
  };
  const server = serverFor(protocol, handle);
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `${protocol === "h2" ? "https" : "http"}://127.0.0.1:${port}`,
    arrivals,
    charges: () => charges,
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise((resolve) => {
        sockets.forEach((socket) => socket.destroy());
        server.close(() => resolve());
      }),
  };
}

type Handler = Parameters<typeof createServer>[1] & Parameters<typeof createSecureServer>[1];

// The compatibility API of node:http2 answers HTTP/1.1 and HTTP/2 requests alike, through the same calls.
function serverFor(protocol: Protocol, handle: Handler): Server {
  if (protocol === "http/1.1") return createServer(handle);
  if (protocol === "h2") return createSecureServer({ ...certificate(), allowHTTP1: true }, handle);
  const [http1, http2] = [createServer(handle), createH2cServer(handle)];
  return createTcpServer((socket) =>
    socket.once("data", (first) => {
      // Paused, so that the first bytes wait in the socket's buffer for the server that reads them.
      socket.pause().unshift(first);
      if (first.toString("latin1").startsWith("PRI * HTTP/2.0")) http2.emit("connection", socket);
      else http1.emit("connection", socket.resume());
    }),
  );
}

/** A key and a certificate for 127.0.0.1, valid for a day, from openssl. */
function certificate(): { key: Buffer; cert: Buffer } {
  const folder = mkdtempSync(path.join(tmpdir(), "checkout-"));
  try {
    const [key, cert] = [path.join(folder, "key.pem"), path.join(folder, "cert.pem")];
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"].concat([
        "-keyout",
        key,
        "-out",
        cert,
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ]),
      { stdio: "ignore" },
    );
    return { key: readFileSync(key), cert: readFileSync(cert) };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
