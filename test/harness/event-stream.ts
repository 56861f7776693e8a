/** A Server-Sent Events client for tests: reads `GET /api/lab/stream` as a browser's EventSource would. */
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

export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<EventStreamReader> {
  const aborter = new AbortController();
  const response = await fetch(url, { headers, signal: aborter.signal });
  if (!response.ok || !response.body) throw new Error(`${url} answered ${response.status}`);
  if (!response.headers.get("content-type")?.startsWith("text/event-stream"))
    throw new Error(`${url} is not an event stream: ${response.headers.get("content-type")}`);
  const messages: EventMessage[] = [];
  const waiters = new Set<() => void>();
  let ended: Error | null = null;

  void (async () => {
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
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
      }
      ended = new Error("the stream ended");
    } catch (error) {
      ended = error instanceof Error ? error : new Error(String(error));
    }
    for (const wake of waiters) wake();
  })();

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
    close: () => aborter.abort(),
  };
}
