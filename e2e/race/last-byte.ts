import net from "node:net";
import tls from "node:tls";
import type { Flight } from "./flight.js";
import { readAnswer } from "./http1-answer.js";
import type { WireRequest } from "./wire.js";

/**
 * How long a connection's 100 Continue is waited for before its last byte goes anyway: curl's default
 * (CURLOPT_EXPECT_100_TIMEOUT_MS), for servers that ignore the expectation.
 */
const continueWaitMs = 1_000;

/**
 * Last-byte synchronisation over HTTP/1.1: one new connection per request, every request written but its last
 * byte, then every last byte in one loop. No server can act on a request before its last byte is in, so they
 * all become complete within the loop's time, however long each took to write or to travel. A request with a
 * body says `expect: 100-continue`, and the last bytes wait until the server has answered every head with its
 * 100 Continue: it has accepted the connection, read the head and handed the request on, and what it does
 * before reading a body (a session check) is done before the race. On the lab, a burst of 10 over connections
 * just opened arrived 317 ms apart (median of 6) without that wait, 31 ms with it.
 */
export async function sendLastByte(
  requests: WireRequest[],
  { ignoreHTTPSErrors }: { ignoreHTTPSErrors: boolean },
): Promise<Flight> {
  const connected = await Promise.allSettled(requests.map((request) => connect(request.url, ignoreHTTPSErrors)));
  const sockets = connected.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const refused = connected.find((result) => result.status === "rejected");
  if (refused) {
    sockets.forEach((socket) => socket.destroy());
    throw new Error(`last-byte: could not connect: ${(refused.reason as Error).message}`);
  }
  const wires = requests.map(serialised);
  const answers = sockets.map((socket, index) => readAnswer(socket, requests[index]!.method));
  // Answers are awaited by the race, one by one: none may reject unobserved meanwhile.
  answers.forEach((answer) => answer.catch(() => {}));
  const heard = sockets.map((socket, index) => (requests[index]!.body.length > 0 ? firstAnswer(socket) : null));
  await Promise.all(sockets.map((socket, index) => written(socket, wires[index]!.subarray(0, -1))));
  const acknowledged = (await Promise.all(heard)).filter(Boolean).length;

  const sentAt: number[] = [];
  const startedAt = performance.now();
  for (const [index, socket] of sockets.entries()) {
    socket.write(wires[index]!.subarray(-1));
    sentAt.push(performance.now());
  }
  return { startedAt, sentAt, answers, acknowledged };
}

function connect(url: URL, ignoreHTTPSErrors: boolean): Promise<net.Socket> {
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return new Promise((resolve, reject) => {
    const socket =
      url.protocol === "https:"
        ? tls.connect({
            host,
            port,
            servername: net.isIP(host) ? undefined : host,
            rejectUnauthorized: !ignoreHTTPSErrors,
            ALPNProtocols: ["http/1.1"],
          })
        : net.connect({ host, port });
    // Each write goes out when it is made: the last bytes must not wait for one another (Nagle).
    socket.setNoDelay(true);
    socket.once(url.protocol === "https:" ? "secureConnect" : "connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** The request as HTTP/1.1 puts it on the wire, for a connection that carries only it. */
function serialised({ method, url, headers, body }: WireRequest): Buffer {
  const fields = [
    `host: ${url.host}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ...(body.length > 0 || !["GET", "HEAD", "DELETE", "OPTIONS"].includes(method)
      ? [`content-length: ${body.length}`]
      : []),
    ...(body.length > 0 ? ["expect: 100-continue"] : []),
    "connection: close",
  ];
  const head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\n${fields.join("\r\n")}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, "latin1"), body]);
}

/**
 * True once the server answers anything on the connection (its 100 Continue, or a final answer it gives
 * before the body); false if it says nothing for `continueWaitMs`.
 */
const firstAnswer = (socket: net.Socket) =>
  new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), continueWaitMs);
    socket.once("data", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });

/** Resolves once the bytes are handed to the operating system. */
const written = (socket: net.Socket, bytes: Buffer) =>
  new Promise<void>((resolve, reject) => socket.write(bytes, (error) => (error ? reject(error) : resolve())));
