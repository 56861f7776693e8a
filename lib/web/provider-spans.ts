/**
 * The provider client with a span around each of its calls (kind client), for the composition root: one span per
 * logical call, its retries inside it, so that a switch's trace shows its unlink and its link between the lease's
 * checkpoints. Like the lease's spans, they use `@opentelemetry/api` only: no-ops without an SDK registered.
 */
import { SpanKind, SpanStatusCode, trace, type Attributes } from "@opentelemetry/api";
import { ProviderCallError, type IdentityProviderClient, type ProviderCallContext } from "../provider/client";

const tracer = trace.getTracer("lease-lock-lab/provider");

/** What every call's span carries: the operation, and the fence the call was sent with (when it had one). */
const contextAttributes = ({ operationId, fence }: ProviderCallContext): Attributes =>
  fence === undefined ? { "operation.id": operationId } : { "operation.id": operationId, "lease.fence": String(fence) };

/** A failed call's attributes: how it failed, the provider's status, and whether a write may still land. */
function failureAttributes(error: unknown): Attributes {
  if (!(error instanceof ProviderCallError)) return { "provider.outcome": "failed" };
  return {
    "provider.outcome": error.kind,
    "provider.attempts": error.attempts,
    "provider.may_have_landed": error.mayHaveLanded,
    ...(error.status === null ? {} : { "http.response.status_code": error.status }),
  };
}

async function inCallSpan<T>(name: string, attributes: Attributes, call: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      const answer = await call();
      span.setAttribute("provider.outcome", "ok");
      return answer;
    } catch (error) {
      span.setAttributes(failureAttributes(error));
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** `client`, each call in a span `provider.get`, `provider.unlink`, `provider.link` or `provider.rename`. */
export function tracedProvider(client: IdentityProviderClient): IdentityProviderClient {
  return {
    getAccount: (accountId, context) =>
      inCallSpan("provider.get", { ...contextAttributes(context), "provider.account_id": accountId }, () =>
        client.getAccount(accountId, context),
      ),
    unlinkIdentity: (primaryId, identityId, context) =>
      inCallSpan(
        "provider.unlink",
        { ...contextAttributes(context), "provider.account_id": primaryId, "provider.identity_id": identityId },
        () => client.unlinkIdentity(primaryId, identityId, context),
      ),
    linkAccount: (primaryId, secondaryId, context) =>
      inCallSpan(
        "provider.link",
        { ...contextAttributes(context), "provider.account_id": primaryId, "provider.identity_id": secondaryId },
        () => client.linkAccount(primaryId, secondaryId, context),
      ),
    renameAccount: (accountId, name, context) =>
      inCallSpan("provider.rename", { ...contextAttributes(context), "provider.account_id": accountId }, () =>
        client.renameAccount(accountId, name, context),
      ),
  };
}
