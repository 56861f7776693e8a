/** What the simulated provider says of itself at `GET /lab/health`, so that a starter can tell it from another program. */

/** What `GET /lab/health` answers: that this is the lab's provider, the database of its state, and its code. */
export interface ProviderHealth {
  service: typeof providerService;
  database: string;
  pid: number;
  /**
   * A digest of the code it runs, as it was when it started (lib/provider-process-control.ts's `sourceDigest`): one
   * left running from before a pull runs older code than the app beside it, and its starter tells.
   */
  code: string;
}

export const providerService = "lease-lock-lab-provider";

/** How the provider's sessions are named in `pg_stat_activity`: its own, not the app's. */
export const providerApplicationName = "lab:provider";

/** Which database a provider keeps its state in, as its health answers it: host, port and name, no password. */
export function databaseOf(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  return `${url.hostname}:${url.port || 5432}${url.pathname}`;
}
