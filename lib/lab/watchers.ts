/**
 * Whether another instance watches the lab live (has clients on its stream): running lanes are told to the
 * other instances (stream.ts) only then, so that with nobody watching elsewhere a lane's changes cost no
 * notification. On the `lab_watching` channel an instance says `watching` when its first client comes and
 * every `watchingEveryMs` while it has any; one that starts listening (or listens again after losing its
 * connection) says `asking`, and the watchers answer at once. Each instance believes another watches for
 * `believedForMs` after it last said so: two heartbeats, so one late or lost does not stop the telling.
 */
import { notify, subscribe } from "../core/notifications";
import { processSingleton } from "../core/process-singleton";
import { instanceId } from "./instance";
import { instrumentDb } from "./instrument-db";

const watchingChannel = "lab_watching";
const watchingEveryMs = 5_000;
const believedForMs = 12_000;

type Word = "watching" | "asking";

const watchers = processSingleton("Watchers", () => ({
  listening: false,
  othersWatchUntil: 0,
  heartbeat: null as ReturnType<typeof setInterval> | null,
}));

function say(word: Word): void {
  notify(instrumentDb(), watchingChannel, JSON.stringify({ word, instance: instanceId })).catch((error: unknown) =>
    console.error(`[stream] could not tell the other instances "${word}":`, error),
  );
}

/** Whether another instance has said lately that it watches. */
export const othersWatch = (): boolean => Date.now() < watchers.othersWatchUntil;

/**
 * Hears the other instances (once per process, at the lab's start); `onOthersWatching` runs each time one
 * starts watching after none did, to tell it what runs already.
 */
export function hearWatchers(onOthersWatching: () => void): void {
  if (watchers.listening) return;
  watchers.listening = true;
  subscribe(watchingChannel, {
    onMessage: (payload) => {
      const { word, instance } = JSON.parse(payload) as { word: Word; instance: string };
      if (instance === instanceId) return;
      if (word === "asking") {
        if (watchers.heartbeat) say("watching");
        return;
      }
      const watchedBefore = othersWatch();
      watchers.othersWatchUntil = Date.now() + believedForMs;
      if (!watchedBefore) onOthersWatching();
    },
    onConnect: () => say("asking"),
  });
}

/** This instance's stream has `clients` clients now: it says it watches while it has any. */
export function watchingHere(clients: number): void {
  if (clients > 0 && !watchers.heartbeat) {
    say("watching");
    watchers.heartbeat = setInterval(() => say("watching"), watchingEveryMs);
    watchers.heartbeat.unref?.();
  } else if (clients === 0 && watchers.heartbeat) {
    clearInterval(watchers.heartbeat);
    watchers.heartbeat = null;
  }
}
