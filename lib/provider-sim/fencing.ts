/**
 * The fence a call brings, read off its headers: its fencing token, the generation it was taken in, and its
 * holder (the operation id its calls carry). The store's functions compare it, when they apply a write, with
 * the highest the provider has seen for the accounts: (generation, fence) in that order, or the fence alone
 * for a provider that keeps the counter only (idp.check_fence, migrations 0011 and 0015).
 */
import type { ProviderSettings } from "./chaos-settings";
import type { Fencing } from "./store";

export function fencingOf(
  request: Request,
  { enforceFencing, fenceGenerations }: Pick<ProviderSettings, "enforceFencing" | "fenceGenerations">,
): Fencing {
  return {
    fence: numberHeader(request, "X-Fencing-Token"),
    generation: numberHeader(request, "X-Fencing-Generation"),
    holder: request.headers.get("X-Operation-Id"),
    enforce: enforceFencing,
    byGeneration: fenceGenerations,
  };
}

/** A fencing header's number, or null. */
function numberHeader(request: Request, name: string): bigint | null {
  const header = request.headers.get(name);
  return header && /^\d{1,19}$/.test(header) ? BigInt(header) : null;
}
