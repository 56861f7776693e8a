/**
 * Whether another instance watches the lab live (has clients on its stream): running lanes are told to the
 * other instances (stream.ts) only then, so that with nobody watching elsewhere a lane's changes cost no
 * notification. On the `lab_watching` channel an instance says `joined` each time a client comes (the others
 * then tell it every lane they run: the new client's snapshot has no running lane of theirs) and `watching`
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

type Word = "joined" | "watching" | "asking";

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
 * Hears the other instances (once per process, at the lab's start); `onNewWatcher` runs each time another
 * instance gets a client, or is heard watching after none was, to tell it what runs already.
 */
export function hearWatchers(onNewWatcher: () => void): void {
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
      if (word === "joined" || !watchedBefore) onNewWatcher();
    },
    onConnect: () => say("asking"),
  });
}

/** A client came to this instance's stream: the others are told, and told while it has any that it watches. */
export function clientJoined(): void {
  say("joined");
  if (watchers.heartbeat) return;
  watchers.heartbeat = setInterval(() => say("watching"), watchingEveryMs);
  watchers.heartbeat.unref?.();
}

/** A client left; `clients` remain: with none, this instance stops saying that it watches. */
export function clientLeft(clients: number): void {
  if (clients > 0 || !watchers.heartbeat) return;
  clearInterval(watchers.heartbeat);
  watchers.heartbeat = null;
}
