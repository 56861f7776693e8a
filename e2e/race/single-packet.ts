import http2 from "node:http2";
import type { Flight } from "./flight.js";
import type { WireRequest, WireResponse } from "./wire.js";

/**
 * The single-packet attack over HTTP/2: one connection, one stream per request, each opened with its headers
 * and its body but for the last byte; once the server has them all, every stream's final DATA frame is queued
 * in one turn of the event loop, and node:http2 writes a session's queued frames to the socket together, so
 * they leave in one TCP packet (checked with a capture: see README.md).
 */
export async function sendSinglePacket(
  requests: WireRequest[],
  { ignoreHTTPSErrors }: { ignoreHTTPSErrors: boolean },
): Promise<Flight> {
  const origins = [...new Set(requests.map((request) => request.url.origin))];
  if (origins.length !== 1)
    throw new Error(
      `single-packet: the held requests must go to one origin (one connection); got ${origins.join(", ")}`,
    );
  const session = await connected(origins[0]!, ignoreHTTPSErrors);
  const allowed = session.remoteSettings.maxConcurrentStreams ?? Number.POSITIVE_INFINITY;
  if (allowed < requests.length) {
    session.destroy();
    throw new Error(`single-packet: ${origins[0]} takes ${allowed} streams at once; the race has ${requests.length}`);
  }
  const streams = requests.map(({ method, url, headers, body }) =>
    session.request(
      {
        ...headers,
        ...(body.length > 0 || !["GET", "HEAD", "DELETE", "OPTIONS"].includes(method)
          ? { "content-length": String(body.length) }
          : {}),
        ":method": method,
        ":path": `${url.pathname}${url.search}`,
      },
      { endStream: false },
    ),
  );
  const answers = streams.map(answerOf);
  answers.forEach((answer) => answer.catch(() => {}));
  streams.forEach((stream, index) => {
    const body = requests[index]!.body;
    if (body.length > 1) stream.write(body.subarray(0, -1));
  });
  // The server acknowledges a ping once it has read every frame sent before it: every stream is open and
  // waits for its last frame. A condition, not a pause.
  await ping(session);

  const sentAt: number[] = [];
  const startedAt = performance.now();
  for (const [index, stream] of streams.entries()) {
    const body = requests[index]!.body;
    // The last byte with END_STREAM; a request without a body ends with an empty DATA frame.
    if (body.length > 0) stream.end(body.subarray(-1));
    else stream.end();
    sentAt.push(performance.now());
  }
  void Promise.allSettled(answers).then(() => session.close());
  return { startedAt, sentAt, answers, acknowledged: requests.length };
}

function connected(origin: string, ignoreHTTPSErrors: boolean): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(origin, { rejectUnauthorized: !ignoreHTTPSErrors });
    const failed = (error: Error) => refuse(error.message);
    const closed = () => refuse("it closed the connection");
    const refuse = (why: string) => {
      session.destroy();
      reject(new Error(`single-packet: ${origin} does not speak HTTP/2 to the kit (${why})`));
    };
    session.once("error", failed);
    session.once("close", closed);
    // The server's settings say how many streams it takes at once. From here each stream reports its own end.
    session.once("remoteSettings", () => {
      session.off("error", failed).off("close", closed);
      session.on("error", () => {});
      resolve(session);
    });
  });
}

const ping = (session: http2.ClientHttp2Session) =>
  new Promise<void>((resolve, reject) => session.ping((error) => (error ? reject(error) : resolve())));

function answerOf(stream: http2.ClientHttp2Stream): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let headers: Record<string, string> = {};
    const chunks: Buffer[] = [];
    stream.on("response", (received) => {
      status = Number(received[":status"]);
      headers = Object.fromEntries(
        Object.entries(received)
          .filter(([name]) => !name.startsWith(":"))
          .map(([name, value]) => [name, [value].flat().join(name === "set-cookie" ? "\n" : ", ")]),
      );
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve({ status, headers, body: Buffer.concat(chunks) }));
    stream.on("error", reject);
    stream.on("close", () => reject(new Error(`the stream closed without a whole answer (code ${stream.rstCode})`)));
  });
}
