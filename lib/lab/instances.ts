/**
 * The app instances the lab knows: this one, and its peers (`--instances N` and the tests set
 * LAB_PEER_URLS, comma-separated). A page can send a switch to a peer through this instance (the relay):
 * a browser's own request to another port would be cross-origin, which the CSRF rule refuses.
 */
import { z } from "zod";
import { Problem } from "../core/problems";
import { databaseCluster, shownUrl, type NodeRole } from "./database-nodes";
import { instanceId } from "./instance";

export const peerUrls = (): string[] =>
  (process.env.LAB_PEER_URLS ?? "")
    .split(",")
    .map((url) => url.trim())
    .filter(Boolean);

export interface Instances {
  /** The instance that answered this request (behind a balancer, whichever it chose). */
  instance: string;
  /** The balancer's address when one round-robins the instances (`--balance`), else null. */
  balancer: string | null;
  /** Each peer by its number (its place in LAB_PEER_URLS, from 1), the relay's address for it. */
  peers: { peer: number; url: string }[];
  /**
   * The database's nodes under `--replica` or `--ha`, each as it answers now (empty with one database);
   * a node that does not answer (killed, restarting) is listed in `databasesUnreachable` instead.
   */
  databases: { name: string; url: string; role: NodeRole }[];
  databasesUnreachable: { name: string; url: string }[];
}

export async function instances(): Promise<Instances> {
  const nodes = (await databaseCluster())?.nodes ?? [];
  return {
    instance: instanceId,
    balancer: process.env.LAB_BALANCER_URL || null,
    peers: peerUrls().map((url, index) => ({ peer: index + 1, url })),
    databases: nodes.flatMap(({ name, url, role }) => (role ? [{ name, url: shownUrl(url), role }] : [])),
    databasesUnreachable: nodes.flatMap(({ name, url, role }) => (role ? [] : [{ name, url: shownUrl(url) }])),
  };
}

export const peerSchema = z
  .string()
  .regex(/^[1-9]\d{0,1}$/, "must be a peer's number (1, 2, …), as GET /api/lab/instances lists them")
  .transform(Number);

export class PeerNotFound extends Problem {
  constructor(peer: number) {
    super(404, "peer-not-found", "No such app instance", `This instance knows no peer number ${peer}.`);
  }
}

export class PeerUnreachable extends Problem {
  constructor(url: string, reason: string) {
    super(502, "peer-unreachable", "The other app instance did not answer", `${url} did not answer: ${reason}.`);
  }
}

/** The answer's headers a relay passes on: the body's type and when to try again. */
const relayedHeaders = ["content-type", "retry-after"];

/**
 * Sends a switch to a peer as the signed-in user (the session cookie goes along: the instances share the
 * database that holds the sessions) and answers whatever the peer answered, as it answered it.
 */
export async function relaySwitch(
  peer: number,
  userId: string,
  body: { identityId: string },
  headers: { cookie: string | null; idempotencyKey: string | null },
): Promise<Response> {
  const url = peerUrls()[peer - 1];
  if (!url) throw new PeerNotFound(peer);
  let answer: Response;
  let answerBody: ArrayBuffer;
  try {
    answer = await fetch(`${url}/api/users/${userId}/primary`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        ...(headers.cookie ? { Cookie: headers.cookie } : {}),
        ...(headers.idempotencyKey ? { "Idempotency-Key": headers.idempotencyKey } : {}),
      },
      body: JSON.stringify(body),
    });
    // Read here: a peer that dies while answering did not answer either.
    answerBody = await answer.arrayBuffer();
  } catch (error) {
    throw new PeerUnreachable(url, error instanceof Error ? ((error.cause as Error)?.message ?? error.message) : "");
  }
  const passed = new Headers();
  for (const name of relayedHeaders) {
    const value = answer.headers.get(name);
    if (value !== null) passed.set(name, value);
  }
  return new Response(answerBody, { status: answer.status, headers: passed });
}
