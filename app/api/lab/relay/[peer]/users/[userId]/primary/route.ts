import type { NextRequest } from "next/server";
import { z } from "zod";
import { parseOrThrow } from "@/lib/core/validation";
import { peerSchema, relaySwitch } from "@/lib/lab/instances";
import { requireLab } from "@/lib/lab/settings";
import { idempotencyKeySchema } from "@/lib/switch/idempotency";
import { identityIdSchema, userIdSchema } from "@/lib/switch/ids";
import { headerText, parseJsonBody, respond } from "@/lib/web/http";

const bodySchema = z.strictObject({ identityId: identityIdSchema });

/**
 * The switch, run by another app instance (lab only): checked here, then sent to the peer with the
 * session cookie; its answer comes back as it is (the peer checks the session, as for any switch).
 */
export async function POST(
  request: NextRequest,
  { params }: RouteContext<"/api/lab/relay/[peer]/users/[userId]/primary">,
): Promise<Response> {
  return respond(request, async () => {
    requireLab();
    const path = await params;
    const peer = parseOrThrow(peerSchema, path.peer, "peer");
    const userId = parseOrThrow(userIdSchema, path.userId, "userId");
    const body = await parseJsonBody(request, bodySchema);
    parseOrThrow(
      idempotencyKeySchema.optional(),
      headerText(request, "Idempotency-Key") ?? undefined,
      "Idempotency-Key",
    );
    return relaySwitch(peer, userId, body, {
      cookie: request.headers.get("cookie"),
      // Forwarded as its bytes arrived (latin1 characters, one a byte), so the peer reads the key as sent.
      idempotencyKey: request.headers.get("Idempotency-Key"),
    });
  });
}
