/** The lab as its race tests see it: who switches what, and what the provider and the audit say happened. */
import { expect, type APIRequestContext, type Page } from "@playwright/test";
import { readLab } from "../lab";
import type { RaceResult } from "@lease-lock-lab/race";

export interface Switcher {
  userId: string;
  displayName: string;
  /** The identity this actor makes primary (not the seed's primary), and its button's label. */
  identityId: string;
  label: string;
}

const ada = { userId: "ada", displayName: "Ada Lovelace" };
/** Three devices or tabs of one user, each making another of Ada's identities primary. */
export const adaSwitchers: Switcher[] = [
  { ...ada, identityId: "github|8812", label: "GitHub · @ada" },
  { ...ada, identityId: "auth0|ada-email", label: "Email · ada@analytical.test" },
  { ...ada, identityId: "apple|001122.ada", label: "Apple · ada@icloud.test" },
];
export const graceSwitcher: Switcher = {
  userId: "grace",
  displayName: "Grace Hopper",
  identityId: "google-oauth2|77",
  label: "Google · grace@gmail.test",
};

/** Signs the page's browser context in (a session cookie of its own) as the demo user. */
export async function signIn(page: Page, userId: string): Promise<void> {
  expect((await page.request.post("/api/session", { data: { userId } })).status()).toBe(204);
}

export async function openIdentities(page: Page, switcher: Switcher): Promise<void> {
  await page.goto("/");
  // The page is heavy for a busy machine: several of them load at once.
  await expect(page.getByRole("heading", { name: `${switcher.displayName}'s identities` })).toBeVisible({
    timeout: 15_000,
  });
}

export const makePrimary = (page: Page, switcher: Switcher) =>
  page.getByRole("button", { name: `Make primary for ${switcher.label}` }).click();

/** The switch's request as the page's own code sends it, without waiting for its answer. */
export const sendSwitch = (page: Page, { userId, identityId }: Switcher) =>
  page.evaluate(
    ([userId, identityId]) => {
      void fetch(`/api/users/${userId}/primary`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ identityId }),
      });
    },
    [userId, identityId] as const,
  );

export async function auditOf(request: APIRequestContext, userId: string): Promise<{ consistent: boolean }> {
  const audit = await readLab(request, "/api/lab/audit");
  return audit.users.find((user: { userId: string }) => user.userId === userId);
}

interface ProviderCall {
  method: string;
  path: string;
  status: number;
  operationId: string | null;
}

/** The provider's call log, in the order the calls were logged (each is logged before it is answered). */
export async function providerCalls(request: APIRequestContext): Promise<ProviderCall[]> {
  const { calls } = (await readLab(request, "/api/lab/provider")) as { calls: ProviderCall[] };
  return calls.filter((call) => call.operationId !== null);
}

/** The effect to count: operations that changed the provider (a successful unlink or link). */
export const operationsThatWrote = async (request: APIRequestContext) =>
  new Set(
    (await providerCalls(request))
      .filter((call) => call.method !== "GET" && call.status >= 200 && call.status < 300)
      .map((call) => call.operationId),
  ).size;

/**
 * The calls grouped by operation when every operation's calls are contiguous in the log (no call of
 * one between two of another's); null when they interleave.
 */
export function contiguousOperations(calls: ProviderCall[]): ProviderCall[][] | null {
  const blocks: ProviderCall[][] = [];
  for (const call of calls) {
    const current = blocks.at(-1);
    if (current?.[0]!.operationId === call.operationId) current.push(call);
    else if (blocks.some((block) => block[0]!.operationId === call.operationId)) return null;
    else blocks.push([call]);
  }
  return blocks;
}

/** The account a switch linked the old primary under: its link's `POST /api/v2/users/{id}/identities`. */
export const linkedUnder = (block: ProviderCall[]) =>
  /^\/api\/v2\/users\/([^/]+)\/identities$/.exec(block.find((call) => call.method === "POST")?.path ?? "")?.[1];

/** The account a switch unlinked its target from: its unlink's `DELETE /api/v2/users/{id}/identities/…`. */
export const unlinkedFrom = (block: ProviderCall[]) =>
  /^\/api\/v2\/users\/([^/]+)\/identities\//.exec(block.find((call) => call.method === "DELETE")?.path ?? "")?.[1];

/** The race in words plus what the provider saw, for an assertion's message. */
export const withCalls = async (race: RaceResult, request: APIRequestContext) =>
  `${race.story}\nprovider calls: ${JSON.stringify((await readLab(request, "/api/lab/provider")).calls)}`;
