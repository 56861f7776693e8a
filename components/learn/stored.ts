"use client";

import { useCallback, useSyncExternalStore } from "react";

/** Told to this tab's readers when it writes a value (the `storage` event tells only the other tabs). */
const changedHere = "lease-lock-lab:stored";

const subscribe = (changed: () => void) => {
  window.addEventListener("storage", changed);
  window.addEventListener(changedHere, changed);
  return () => {
    window.removeEventListener("storage", changed);
    window.removeEventListener(changedHere, changed);
  };
};

/** Writes a value this browser keeps (null removes it), and tells every reader of this tab. */
export function store(key: string, value: unknown): void {
  if (value === null) window.localStorage.removeItem(key);
  else window.localStorage.setItem(key, JSON.stringify(value));
  window.dispatchEvent(new Event(changedHere));
}

/**
 * A value this browser keeps under `key` (JSON), read again whenever it changes, in this tab or another;
 * null while the page renders on the server, and when nothing is kept.
 */
export function useStored<T>(key: string): [T | null, (value: T | null) => void] {
  const raw = useSyncExternalStore(
    subscribe,
    () => window.localStorage.getItem(key),
    () => null,
  );
  const set = useCallback((value: T | null) => store(key, value), [key]);
  return [raw === null ? null : (JSON.parse(raw) as T), set];
}

/** What the course and the cards keep per experiment: the last run, the prediction made before it. */
export const storedKeys = {
  lastRun: (experimentId: string) => `lease-lock-lab.learn.last-run.${experimentId}`,
  prediction: (experimentId: string) => `lease-lock-lab.learn.prediction.${experimentId}`,
};
