import type { IdentityProviderClient } from "../../lib/provider/client";

/** A provider whose rename answers only when told to: the rename has read the user and waits at the provider. */
export function slowRenamingProvider() {
  let answer!: () => void;
  let arrived!: () => void;
  const atProvider = new Promise<void>((resolve) => (arrived = resolve));
  const provider = {
    renameAccount: () => {
      arrived();
      return new Promise<void>((resolve) => (answer = resolve));
    },
  } as unknown as IdentityProviderClient;
  return { provider, atProvider, answer: () => answer() };
}
