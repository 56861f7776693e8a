import type { HeldRequest } from "./barrier.js";
import { sendLastByte } from "./last-byte.js";
import { sendSinglePacket } from "./single-packet.js";
import { fulfilledHeaders, wireRequestOf, type WireResponse } from "./wire.js";

/**
 * Who sends the held requests once every actor's is in. `browser` (the default): the browser, each actor's on
 * its own connection, as the barrier lets it go. `last-byte`: the kit, over HTTP/1.1, one new connection per
 * request, every request written but its last byte, then all the last bytes in one loop. `single-packet`: the
 * kit, over one HTTP/2 connection, every stream's final frame in one write. Either way of the kit's, each page
 * gets the answer its request got (`route.fulfill`), as if the browser had sent it.
 */
export type Send = "browser" | "last-byte" | "single-packet";

/** The kit's own sending, as its senders report it. */
export interface Flight {
  /** performance.now() just before the first final write. */
  startedAt: number;
  /** performance.now() after each request's final write, in the order of the requests. */
  sentAt: number[];
  /** Each request's answer, as read from the kit's connection. */
  answers: Promise<WireResponse>[];
  /** How many requests the server acknowledged having begun before the final writes (100 Continue, PING). */
  acknowledged: number;
}

/**
 * Sends the held requests itself, in one flight, and hands each page its answer (or fails its request, with
 * the reason kept for the story). Answers once every final byte is written: how long writing them took (ms),
 * and how many requests the server had acknowledged before.
 */
export async function sendInOneFlight(
  held: HeldRequest[],
  send: Exclude<Send, "browser">,
  options: { ignoreHTTPSErrors: boolean },
): Promise<{ flightMs: number; acknowledged: number }> {
  const requests = await Promise.all(held.map((each) => wireRequestOf(each.request)));
  const flight = await (send === "last-byte" ? sendLastByte : sendSinglePacket)(requests, options);
  held.forEach((each, index) => {
    each.releasedAt = flight.sentAt[index];
    each.delivered = flight.answers[index]!.then(
      (answer) =>
        each.route.fulfill({ status: answer.status, headers: fulfilledHeaders(answer.headers), body: answer.body }),
      async (error: Error) => {
        each.sendFailure = `${send}: ${error.message}`;
        await each.route.abort("failed");
      },
    ).catch(() => {}); // a page closed meanwhile: its answer says it got none
  });
  return { flightMs: flight.sentAt.at(-1)! - flight.startedAt, acknowledged: flight.acknowledged };
}
