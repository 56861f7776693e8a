/**
 * Which app instance served each of the page's requests, as the balancer says it (`--balance`: HAProxy
 * sets `X-Lab-Instance` on every answer). Without a balancer no answer carries it, and the list stays empty.
 */
export interface ServedRequest {
  at: number;
  method: string;
  path: string;
  instance: string;
}

const kept = 8;
let served: ServedRequest[] = [];
const listeners = new Set<() => void>();

export function recordServed(method: string, path: string, response: Response): void {
  const instance = response.headers.get("X-Lab-Instance");
  if (!instance) return;
  served = [{ at: Date.now(), method, path, instance }, ...served].slice(0, kept);
  for (const listener of listeners) listener();
}

export const servedRequests = (): ServedRequest[] => served;
const noRequests: ServedRequest[] = [];
export const servedOnServer = (): ServedRequest[] => noRequests;

export function onServed(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
