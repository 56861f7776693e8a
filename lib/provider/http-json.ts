/**
 * One JSON request over `node:http` (or `node:https`) on kept-alive connections: how the app's calls to the
 * provider leave the process. Node's global `fetch` costs the caller about 4× the CPU per call here
 * (bench/outbound-calls.ts: 0.39–0.45 against 0.11 ms a call, 16 at once), and inside Next.js it is wrapped
 * in the data cache's lookup and lock besides; `undici.request` costs what `node:http` does and would be a
 * dependency. A call that gets no whole answer (refused, reset, cut off, or aborted by its signal) rejects.
 */
import http from "node:http";
import https from "node:https";

export interface JsonAnswer {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  /** The body as JSON; null when it is empty or not JSON. */
  payload: unknown;
}

export interface JsonRequest {
  method: string;
  headers?: Record<string, string>;
  /** Sent as JSON when given. */
  body?: unknown;
  signal?: AbortSignal;
}

// Kept-alive connections are reused until the server's Keep-Alive hint says it will close them.
const agents = { "http:": new http.Agent({ keepAlive: true }), "https:": new https.Agent({ keepAlive: true }) };

const parsed = (text: string): unknown => {
  try {
    return text === "" ? null : JSON.parse(text);
  } catch {
    return null;
  }
};

export function requestJson(url: string, options: JsonRequest): Promise<JsonAnswer> {
  const target = new URL(url);
  const protocol = target.protocol === "https:" ? "https:" : "http:";
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers = { ...options.headers, ...(body === undefined ? {} : { "Content-Type": "application/json" }) };
  return new Promise((resolve, reject) => {
    const request = (protocol === "https:" ? https : http).request(target, {
      method: options.method,
      headers,
      agent: agents[protocol],
      signal: options.signal,
    });
    request.on("error", reject);
    request.on("response", (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("error", reject);
      // An answer cut off (its connection reset, or the signal's abort) ends without `end`.
      response.on("close", () => {
        if (!response.complete) reject(new Error("the answer was cut off"));
      });
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          statusText: response.statusMessage ?? "",
          headers: response.headers,
          payload: parsed(text),
        }),
      );
    });
    request.end(body);
  });
}
