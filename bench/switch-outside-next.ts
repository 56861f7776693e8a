/**
 * `outside Next.js` of `npm run bench`: the product's switch (the same lease statements, the same two provider
 * calls through the same client and pool) behind a bare `node:http` server, without Next.js, the lab, sessions
 * or a reconciler. Not a floor: it is our own switch's cost, the part of the app's that is not Next.js's (the
 * floor is bench/bare-server.ts). Started by bench/cpu-servers.ts as `node --import tsx
 * bench/switch-outside-next.ts`, with DATABASE_URL, IDP_BASE_URL, BENCH_SERVER_PORT and DB_POOL_SIZE; tells its
 * parent (an IPC message, `listening`) once it listens.
 */
import http from "node:http";
import { z } from "zod";
import { appDb } from "../lib/core/db";
import { problemFor } from "../lib/core/problems";
import { identityIdSchema, userIdSchema } from "../lib/switch/ids";
import { appIdentityProvider } from "../lib/web/app-provider";
import { productSwitch } from "../lib/web/switch";

const bodySchema = z.strictObject({ identityId: identityIdSchema });
const route = /^\/api\/users\/([^/]+)\/primary$/;

const server = http.createServer((request, response) => {
  const answer = (status: number, body: unknown) =>
    response.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
  const match = route.exec(request.url ?? "");
  if (request.method !== "POST" || !match) return answer(404, { title: "Not found" });
  let text = "";
  request.setEncoding("utf8");
  request.on("data", (chunk: string) => (text += chunk));
  request.on("end", () => {
    void (async () => {
      try {
        const userId = userIdSchema.parse(decodeURIComponent(match[1]!));
        const { identityId } = bodySchema.parse(JSON.parse(text));
        answer(200, await productSwitch.promote(appDb(), appIdentityProvider, { userId, identityId }));
      } catch (error) {
        const problem = problemFor(error);
        answer(problem?.status ?? 400, problem?.toJSON() ?? { title: String(error) });
      }
    })();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.BENCH_SERVER_PORT), "127.0.0.1", () => process.send?.("listening"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
