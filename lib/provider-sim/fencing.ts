/**
 * The fence a call brings, read off its headers: its fencing token and its holder (the operation id its
 * calls carry). The store's functions compare it, when they apply a write, with the highest the provider
 * has seen for the accounts (idp.check_fence, migration 0011).
 */
import type { Fencing } from "./store";

export function fencingOf(request: Request, enforce: boolean): Fencing {
  const token = request.headers.get("X-Fencing-Token");
  return {
    fence: token && /^\d{1,19}$/.test(token) ? BigInt(token) : null,
    holder: request.headers.get("X-Operation-Id"),
    enforce,
  };
}
