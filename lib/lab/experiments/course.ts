/**
 * The course: each experiment as a lesson of a guided class (its minutes, goal, the prediction asked before
 * it runs, its takeaway), and the order they are taught in. The core path fits a 45-minute class; the
 * lessons after it go further. An experiment added to the registry gets its lesson here (course.test.ts
 * says which one is missing), and its place at the end of the order, or wherever it teaches best.
 */

export interface Prediction {
  /** The question asked before the run, in the student's words. */
  prompt: string;
  /** 2 to 4 answers. */
  choices: { id: string; text: string }[];
  /** The id of the answer the run shows when its verdict is "as expected". */
  answer: string;
}

export interface Lesson {
  minutes: number;
  /** What the lesson is for, in one sentence. */
  goal: string;
  prediction: Prediction;
  /** What to remember, in one or two sentences. */
  takeaway: string;
}

/** The 45-minute class, in teaching order: the race, then why not a transaction, then what can go wrong. */
export const corePath = [
  "f4-race-to-acquire",
  "q2-simultaneous-acquire",
  "q1-transaction-holds-connections",
  "advisory-not-enforced",
  "q3-ttl-too-short",
  "f2-lease-stolen",
  "f1-crash-after-acquire",
  "f3-release-fails",
  "q5-advisory-or-lease",
] as const;

/** After the class, or for a longer one: more ways to get it wrong, and the production shapes. */
export const furtherPath = [
  "q4-lock-column-mapped",
  "in-process-mutex",
  "q3-ttl-too-long",
  "pooler-strands-session-lock",
  "redis-restart-loses-lock",
  "failover-async-loses-lease",
  "failover-sync-keeps-lease",
  "ha-failover-under-load",
] as const;

const choices = (...texts: string[]) => texts.map((text, index) => ({ id: "abcd"[index]!, text }));

export const lessons: Record<string, Lesson> = {
  "f4-race-to-acquire": {
    minutes: 4,
    goal: "See the one statement that takes the lease, and what the loser of a double click gets.",
    prediction: {
      prompt: "Two requests send the acquiring UPDATE at the same instant. What happens?",
      choices: choices(
        "Both update the row: two holders",
        "One updates the row; the other waits for its row lock, re-checks its WHERE and updates 0 rows (409)",
        "One of them fails with a deadlock error",
      ),
      answer: "b",
    },
    takeaway:
      "One conditional UPDATE is the whole acquisition: the database serialises the writers of a row and the WHERE " +
      "decides. A SELECT followed by an UPDATE would let both in.",
  },
  "q2-simultaneous-acquire": {
    minutes: 4,
    goal: "Scale the double click to fifty: still one winner, and every loser answers right after its commit.",
    prediction: {
      prompt: "Fifty connections send the acquiring UPDATE at once. How many take the lease?",
      choices: choices(
        "Exactly one; the other 49 update 0 rows",
        "A few of them, before the first one commits",
        "None: they deadlock",
      ),
      answer: "a",
    },
    takeaway:
      "No lock in Node and no retry loop: the row lock and READ COMMITTED's re-check give exactly one winner, " +
      "however many race.",
  },
  "q1-transaction-holds-connections": {
    minutes: 6,
    goal: "See why a transaction around the provider calls is not the answer: it holds the pool, and cannot undo a third party.",
    prediction: {
      prompt:
        "Six switches at once under SELECT … FOR UPDATE around 250 ms provider calls, with a pool of 4 connections. " +
        "What do you expect?",
      choices: choices(
        "The same as the lease: each holds a connection for milliseconds",
        "The pool fills, requests queue, a bystander's reads wait; and a rollback leaves the provider's unlink in place",
        "When the link fails, the rollback undoes the provider's unlink too",
      ),
      answer: "b",
    },
    takeaway:
      "A lease holds a row's columns, not a connection; and no database transaction can undo a third party's change.",
  },
  "advisory-not-enforced": {
    minutes: 4,
    goal: "A lock keeps apart only the writers that take it.",
    prediction: {
      prompt: "While a switch holds the lease, the support tool sets the primary without asking for it. What happens?",
      choices: choices(
        "The support tool is refused with 409",
        "The support tool waits until the lease is free",
        "Nothing stops it: both change the provider, and the audit finds the accounts corrupted",
      ),
      answer: "c",
    },
    takeaway:
      "The lease is advisory: every path that changes the user's links (support tools, scripts, admin pages) must take it.",
  },
  "q3-ttl-too-short": {
    minutes: 6,
    goal: "A TTL shorter than the work: what breaks, what fencing saves, and what the safeguards do.",
    prediction: {
      prompt:
        "The TTL is 500 ms, each provider call takes 1,000 ms, and a second switch comes once the TTL has passed. " +
        "With the textbook lease (no safeguards), what happens?",
      choices: choices(
        "The second switch is refused: the first one is still working",
        "The lease expires under the first switch, the second takes it over, and the provider ends corrupted",
        "The first switch notices its lease expired and stops",
      ),
      answer: "b",
    },
    takeaway:
      "Choose a TTL above the work's duration, and do not trust it alone: a fence checked by the provider, or a " +
      "deadline inside the lease, stops the late writer.",
  },
  "f2-lease-stolen": {
    minutes: 6,
    goal: "A holder that is only slow (a GC pause) loses its lease; the save's own condition is the last line.",
    prediction: {
      prompt:
        "With the safeguards on, the first switch pauses right before its save, longer than its lease can last. A " +
        "second switch takes the lease over and finishes. What does the first switch's save do?",
      choices: choices(
        "It overwrites the second switch's primary",
        "It changes nothing: its WHERE carries the lease's token and expiry, so it answers 409 lease-lost",
        "It waits until the lease is free again, then saves",
      ),
      answer: "b",
    },
    takeaway: "A check before a step is only as good as its moment: every write must carry its own condition.",
  },
  "f1-crash-after-acquire": {
    minutes: 5,
    goal: "A holder that dies leaves its lease behind: the TTL turns the crash into a wait, and the journal lets the next holder finish.",
    prediction: {
      prompt:
        "A switch crashes right after acquiring a 1.5 s lease: no finally, no release. What happens to the next switches?",
      choices: choices(
        "They are locked out for good",
        "They are refused until the lease expires; then one takes it over and recovers the half-done switch",
        "The next one gets in at once: a dead holder's lease is freed",
      ),
      answer: "b",
    },
    takeaway:
      "The TTL is what turns a crash into a wait; the journal is what lets the next holder finish what the dead one left.",
  },
  "f3-release-fails": {
    minutes: 5,
    goal: "A release that fails after the work succeeded must not turn the success into an error.",
    prediction: {
      prompt:
        "The switch worked, then releasing the lease failed. With the textbook lease (release in finally, its error " +
        "to the caller), what does the client get?",
      choices: choices(
        "200: the switch happened",
        "An error (500) for a switch that happened, and the lease stays until its TTL",
        "409: the lease is still held",
      ),
      answer: "b",
    },
    takeaway: "A release is housekeeping: log its failure and retry it in the background; the TTL is the backstop.",
  },
  "q5-advisory-or-lease": {
    minutes: 5,
    goal: "Compare the database's advisory locks and the lease when the connection drops in the middle of the calls.",
    prediction: {
      prompt:
        "Each switch's database connection is dropped during its provider call. Of the database's advisory locks " +
        "and the lease, which still keeps a second switch out?",
      choices: choices(
        "pg_advisory_xact_lock (advisory)",
        "pg_advisory_lock on a pinned session (session-advisory)",
        "The lease stored as data",
      ),
      answer: "c",
    },
    takeaway:
      "A lock that lives in a connection dies with it; the lease lives in the row, with a TTL, an owner and a fence. " +
      "Advisory locks are for short work inside one transaction.",
  },
  "q4-lock-column-mapped": {
    minutes: 5,
    goal: "Keep the lease's columns out of the entity: a save from a stale copy wipes a running switch's lease.",
    prediction: {
      prompt:
        "A rename read the user before a switch took the lease, and saves while the switch runs. With the lock " +
        "columns mapped as entity fields, what happens?",
      choices: choices(
        "Nothing: the rename only changes the name",
        "The save writes the lock columns back empty: the lease vanishes, a second switch gets in, the provider is corrupted",
        "The lease refuses the rename",
      ),
      answer: "b",
    },
    takeaway:
      "Only the lease may write its columns: leave them out of the entity, and save only the columns that changed.",
  },
  "in-process-mutex": {
    minutes: 4,
    goal: "A lock in one process's memory is invisible to every other process.",
    prediction: {
      prompt:
        "Two switches at once, one on each of two app instances, each instance guarding with a mutex in its memory. " +
        "What happens?",
      choices: choices(
        "They queue, as they do on one instance",
        "Both run at once, and the provider is corrupted",
        "The second instance's switch is refused",
      ),
      answer: "b",
    },
    takeaway: "A lock must live where every writer can see it: in the database all the instances share.",
  },
  "q3-ttl-too-long": {
    minutes: 6,
    goal: "A long TTL costs a long lockout after a crash: choose the TTL from the work's measured duration.",
    prediction: {
      prompt:
        "Switches take well under a second, the TTL is 5 s, and a holder crashes right after acquiring. How long is " +
        "the user locked out?",
      choices: choices(
        "Until the switch would have ended: under a second",
        "About the whole 5 s TTL",
        "Until someone restarts the app",
      ),
      answer: "b",
    },
    takeaway:
      "Choose the TTL from the switch's p99.9 plus a margin, and let renewal cover the rarer tail: " +
      "“long to be safe” is a lockout.",
  },
  "pooler-strands-session-lock": {
    minutes: 4,
    goal: "A session lock behind a transaction pooler is stranded on a server connection.",
    prediction: {
      prompt:
        "Through PgBouncer in transaction pooling, a switch takes pg_advisory_lock and ends. What becomes of the lock?",
      choices: choices(
        "It is released when the switch's client disconnects",
        "It stays granted on a server connection back in the pool: no other session can take it",
        "PgBouncer refuses pg_advisory_lock",
      ),
      answer: "b",
    },
    takeaway:
      "A session's state does not survive a transaction pooler; the lease, a row, needs nothing of the session.",
  },
  "redis-restart-loses-lock": {
    minutes: 4,
    goal: "A Redis lock lives in Redis's memory: a restart without persistence forgets it.",
    prediction: {
      prompt: "Redis restarts without persistence while a switch holds its key. What does a second switch find?",
      choices: choices(
        "The key, restored from disk",
        "No key: it takes the lock, and both switches call the provider at once",
        "Redis refuses it until the first switch ends",
      ),
      answer: "b",
    },
    takeaway:
      "A lock is as durable as where it lives: the lease lives in the row it protects, in the database of record.",
  },
  "failover-async-loses-lease": {
    minutes: 5,
    goal: "A lease is as durable as its row: an asynchronous standby promoted loses the acquisitions it never got.",
    prediction: {
      prompt:
        "Two switches took the lease on a primary whose standby had not received them; the standby is promoted. " +
        "What does a third switch get, and what stops the second switch's late write?",
      choices: choices(
        "The lease is still held on the new primary: the third switch is refused",
        "A free lease and a fence number already handed out: only a fence qualified by the generation refuses the late write",
        "A free lease with a new fence number: the counter alone refuses the late write",
      ),
      answer: "b",
    },
    takeaway:
      "Across a failover the fence must be (generation, counter), compared in that order, or replication must be " +
      "synchronous: a counter alone repeats on a promoted standby.",
  },
  "failover-sync-keeps-lease": {
    minutes: 5,
    goal: "Synchronous replication keeps every acknowledged lease across a failover, but not a cancelled commit wait.",
    prediction: {
      prompt:
        "Replication is synchronous. An acquire's commit waits for the standby and is cancelled; PostgreSQL warns " +
        "that it committed locally. The primary dies and the standby is promoted. Where is that lease?",
      choices: choices(
        "On both nodes: synchronous replication sent it before the cancel",
        "On neither: the cancel rolled it back",
        "On the old primary only: the promoted standby never had it, and its fence is issued again",
      ),
      answer: "c",
    },
    takeaway:
      "Synchronous replication keeps what it acknowledged; a commit whose wait was cancelled was never acknowledged, " +
      "so the app must answer it as unknown, and only the generation keeps its fence apart.",
  },
  "ha-failover-under-load": {
    minutes: 4,
    goal: "An HA engine replaces a dead primary in seconds; the app must answer honestly meanwhile, and lose nothing.",
    prediction: {
      prompt:
        "Users keep switching while the primary is killed and Patroni promotes its synchronous standby. " +
        "What do they get?",
      choices: choices(
        "500s until someone restarts the app",
        "200 or 409 before and after; 503 with Retry-After while no primary answers; the audit consistent after",
        "Requests hang until the old primary comes back",
      ),
      answer: "b",
    },
    takeaway:
      "A failover is seconds with no primary: the app says so (503, Retry-After) and never 500; with synchronous " +
      "replication every acknowledged acquisition survives the promotion.",
  },
};

/** Where an experiment stands in the course: its lesson number, and whether the 45-minute class takes it. */
export function placeInCourse(experimentId: string, listed: string[]): { lesson: number; core: boolean } {
  const order = [...corePath, ...furtherPath].filter((id) => listed.includes(id));
  const unplaced = listed.filter((id) => !order.includes(id as (typeof order)[number]));
  const index = [...order, ...unplaced].indexOf(experimentId);
  return { lesson: index + 1, core: (corePath as readonly string[]).includes(experimentId) };
}
