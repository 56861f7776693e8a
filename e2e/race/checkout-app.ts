/**
 * A tiny checkout for the kit's own tests: one "Pay" button that POSTs /pay. The racy server checks
 * "already paid?" and charges after a pause, as a read-then-write does; the safe one claims the order in
 * the same step as the check. It counts what the kit must see: arrivals, charges, requests in flight.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface Arrival {
  /** The actor number the page was opened with (`?actor=`). */
  actor: number;
  /** The browser's `shopper` cookie: one per browser context. */
  shopper: string;
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

/** Starts a checkout on a free loopback port. `safe`: claim the order atomically; `pauseMs`: the charge's pause. */
export async function startCheckout({ safe = false, pauseMs = 150 } = {}): Promise<Checkout> {
  const arrivals: Arrival[] = [];
  let charges = 0;
  let claimed = false;
  let inFlight = 0;
  let maxInFlight = 0;

  const server = createServer(async (request, response) => {
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
    const shopper = /shopper=([^;]+)/.exec(request.headers.cookie ?? "")?.[1] ?? "";
    arrivals.push({ actor: Number(url.searchParams.get("actor") ?? -1), shopper });
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    const refuse = safe ? claimed : charges > 0;
    if (!refuse) claimed = true;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    if (!refuse) charges++;
    inFlight--;
    response.writeHead(refuse ? 409 : 200, { "content-type": "application/json" });
    response.end(JSON.stringify(refuse ? { error: "already paid" } : { paid: true }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    charges: () => charges,
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
