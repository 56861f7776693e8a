/** A Server-Sent Events client for tests: reads `GET /api/lab/stream` as a browser's EventSource would. */
import http from "node:http";

export interface EventMessage {
  id: string | null;
  event: string;
  data: any;
}

export interface EventStreamReader {
  /** Every message received so far, in order. */
  messages: EventMessage[];
  /** Resolves with the first message (received already, or to come) that `matches`; rejects after `timeoutMs`. */
  waitFor(matches: (message: EventMessage) => boolean, timeoutMs?: number): Promise<EventMessage>;
  /** The id of the last message with one, to resume from. */
  lastEventId(): string | null;
  close(): void;
}

/**
 * Over `node:http`, not `fetch`: closing must close the socket. An aborted `fetch` left it open on both ends, and
 * an app with an open request waits a minute before it stops.
 */
export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<EventStreamReader> {
  const request = http.get(url, { headers, agent: false });
  const response = await new Promise<http.IncomingMessage>((resolve, reject) =>
    request.once("response", resolve).once("error", reject),
  );
  if (response.statusCode !== 200) {
    request.destroy();
    throw new Error(`${url} answered ${response.statusCode}`);
  }
  if (!response.headers["content-type"]?.startsWith("text/event-stream")) {
    request.destroy();
    throw new Error(`${url} is not an event stream: ${response.headers["content-type"]}`);
  }
  const messages: EventMessage[] = [];
  const waiters = new Set<() => void>();
  let ended: Error | null = null;
  const end = (error: Error) => {
    ended ??= error;
    for (const wake of waiters) wake();
  };

  let buffer = "";
  response.setEncoding("utf8");
  response.on("data", (chunk: string) => {
    buffer += chunk;
    let boundary: number;
    while ((boundary = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      const message: EventMessage = { id: null, event: "message", data: null };
      const data: string[] = [];
      for (const line of block.split("\n")) {
        const colon = line.indexOf(":");
        if (colon === 0) continue;
        const [field, value] = [line.slice(0, colon), line.slice(colon + 1).replace(/^ /, "")];
        if (field === "id") message.id = value;
        if (field === "event") message.event = value;
        if (field === "data") data.push(value);
      }
      if (data.length === 0) continue;
      message.data = JSON.parse(data.join("\n"));
      messages.push(message);
    }
    for (const wake of waiters) wake();
  });
  response.on("end", () => end(new Error("the stream ended")));
  response.on("error", end);
  request.on("error", end);

  return {
    messages,
    waitFor(matches, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching message within ${timeoutMs} ms; got ${messages.map((m) => m.event)}`));
        }, timeoutMs);
        const check = () => {
          const found = messages.find(matches);
          if (!found && !ended) return;
          clearTimeout(timer);
          waiters.delete(check);
          if (found) resolve(found);
          else reject(ended);
        };
        waiters.add(check);
        check();
      });
    },
    lastEventId: () => messages.findLast((message) => message.id !== null)?.id ?? null,
    close: () => request.destroy(),
  };
}
