/**
 * The consumer's app: one ticket left, and two ways to claim it. Each claim reads the stock, calls something
 * slow (a payment, here a pause), then writes what it read minus one. `/racy/claim` does just that, so claims
 * that overlap all win the same ticket; `/guarded/claim` does it under the installed lease, so one wins and the
 * others are refused (409) while it holds the ticket's row.
 */
import { createServer } from "node:http";
import { setTimeout as pause } from "node:timers/promises";
import { Kysely, PostgresDialect, sql } from "kysely";
import { leaseLock } from "@lease-lock-lab/lease";
import pg from "pg";

const db = new Kysely({
  dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) }),
});
const ticketLease = leaseLock({
  table: "tickets",
  id: "id",
  lockedAt: "claimed_at",
  lockedUntil: "claimed_until",
  token: "claim_token",
  fence: "claim_fence",
});
const SLOW_CALL_MS = 400;

await sql`DROP TABLE IF EXISTS tickets, claims`.execute(db);
await sql`CREATE TABLE tickets (id integer PRIMARY KEY, stock integer NOT NULL, claimed_at timestamptz,
            claimed_until timestamptz, claim_token text, claim_fence bigint NOT NULL DEFAULT 0)`.execute(db);
await sql`CREATE TABLE claims (id serial PRIMARY KEY, route text NOT NULL)`.execute(db);

const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tickets</title></head><body>
<button type="button" id="claim">Claim</button><output id="answer"></output>
<script>
  const route = new URLSearchParams(location.search).get("route");
  document.getElementById("claim").addEventListener("click", async () => {
    const answer = await fetch("/" + route + "/claim", { method: "POST" });
    document.getElementById("answer").textContent = String(answer.status);
  });
</script></body></html>`;

async function claim(route) {
  const { rows } = await sql`SELECT stock FROM tickets WHERE id = 1`.execute(db);
  if (rows[0].stock < 1) return 409;
  await pause(SLOW_CALL_MS);
  await sql`UPDATE tickets SET stock = ${rows[0].stock - 1} WHERE id = 1`.execute(db);
  await sql`INSERT INTO claims (route) VALUES (${route})`.execute(db);
  return 200;
}

async function guardedClaim() {
  const taken = await ticketLease.acquire(db, 1, { ttlMs: 5_000 });
  if (!taken.acquired) return 409;
  try {
    return await claim("guarded");
  } finally {
    await taken.lease.release();
  }
}

async function answer(request) {
  if (request.method === "GET" && request.url.startsWith("/tickets"))
    return { status: 200, body: page, type: "text/html" };
  if (request.method === "POST" && request.url === "/reset") {
    await sql`DELETE FROM tickets`.execute(db);
    await sql`DELETE FROM claims`.execute(db);
    await sql`INSERT INTO tickets (id, stock) VALUES (1, 1)`.execute(db);
    return { status: 204 };
  }
  if (request.method === "GET" && request.url === "/claims") {
    const { rows } = await sql`SELECT count(*)::int AS count FROM claims`.execute(db);
    return { status: 200, body: JSON.stringify(rows[0]), type: "application/json" };
  }
  if (request.method === "POST" && request.url === "/racy/claim") return { status: await claim("racy") };
  if (request.method === "POST" && request.url === "/guarded/claim") return { status: await guardedClaim() };
  return { status: 404 };
}

createServer((request, response) => {
  request.resume();
  answer(request).then(
    ({ status, body = "", type = "text/plain" }) => response.writeHead(status, { "content-type": type }).end(body),
    (error) => response.writeHead(500).end(String(error)),
  );
}).listen(Number(process.env.PORT), "127.0.0.1");
