/** A small HTTP client for tests: talks to the running app like any outside client would. */
import http from "node:http";

export interface Answer<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export function appClient(baseUrl: string, cookie?: string) {
  async function call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer<T>> {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(cookie ? { Cookie: cookie } : {}),
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
  }

  return {
    call,
    /** The `Cookie` header this client sends, if signed in. */
    cookie,
    get: <T = any>(path: string) => call<T>("GET", path),
    post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) =>
      call<T>("POST", path, body, headers),
    put: <T = any>(path: string, body?: unknown) => call<T>("PUT", path, body),

    /** A client carrying `userId`'s session cookie. */
    async signedIn(userId: string) {
      const response = await fetch(`${baseUrl}/api/session`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ userId }),
      });
      if (response.status !== 204) throw new Error(`sign-in as ${userId} answered ${response.status}`);
      const sessionCookie = response.headers.getSetCookie()[0]!.split(";")[0]!;
      return appClient(baseUrl, sessionCookie);
    },

    promote: (userId: string, identityId: string, headers?: Record<string, string>) =>
      call("POST", `/api/users/${userId}/primary`, { identityId }, headers),
    reset: async () => {
      const answer = await call("POST", "/api/lab/reset");
      if (answer.status !== 204) throw new Error(`reset answered ${answer.status}`);
    },
    configure: async (patch: unknown) => {
      const answer = await call("PUT", "/api/lab", patch);
      if (answer.status !== 200)
        throw new Error(`PUT /api/lab answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      return answer.body;
    },
    audit: async () => (await call("GET", "/api/lab/audit")).body,
    /** One user's entry of the audit. */
    userAudit: async (userId: string) =>
      (await call("GET", "/api/lab/audit")).body.users.find((user: { userId: string }) => user.userId === userId),
    provider: async () => (await call("GET", "/api/lab/provider")).body,
    /** The provider's call log. */
    calls: async () => (await call("GET", "/api/lab/provider")).body.calls as ProviderCallSeen[],
    events: async (userId: string) =>
      (await call("GET", `/api/lab/events?userId=${userId}`)).body.events as { kind: string; message: string }[],
    leaseHeld: async (userId: string) => (await call("GET", `/api/users/${userId}`)).body.lease.held as boolean,
  };
}

export interface ProviderCallSeen {
  at: string;
  method: string;
  path: string;
  status: number;
  outcome: string | null;
  operationId: string;
  durationMs: number;
}

export type AppClient = ReturnType<typeof appClient>;

/**
 * One request through node:http, for what fetch refuses to send: the methods the fetch standard forbids
 * (`TRACE`), header bytes that are not latin1 characters. Header values are written as latin1, one
 * character a byte (`utf8Header` makes those characters from a string's UTF-8 bytes).
 */
export function rawRequest(
  baseUrl: string,
  request: { method: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<Answer<string>> {
  return new Promise((resolve, reject) => {
    const sent = http.request(`${baseUrl}${request.path}`, { method: request.method, headers: request.headers });
    sent.on("error", reject);
    sent.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("error", reject);
      response.on("end", () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers))
          if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
        resolve({ status: response.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString() });
      });
    });
    sent.end(request.body);
  });
}

/** `text`'s UTF-8 bytes as latin1 characters: what a header carrying `text` as UTF-8 holds, byte by byte. */
export const utf8Header = (text: string): string => Buffer.from(text, "utf8").toString("latin1");
