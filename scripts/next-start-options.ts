/**
 * What every `next start` of this project is given. A server that closes an idle keep-alive connection races
 * a client that reuses it: a request written as the server's timer fires is reset (ECONNRESET, "other side
 * closed"), and a POST is not sent again. Node closes after 5 s, and a loaded event loop fires that timer
 * late, after the request has arrived: seen in the model checker at a load average of 50-80. So the server
 * waits longer than its clients keep a connection (undici 4 s; HAProxy and browsers close theirs first),
 * as servers behind a balancer are told to.
 */
export const nextStartOptions = ["--keepAliveTimeout", "65000"];

/**
 * What node itself is given for every server of the project (`npm start`'s instances, the tests' and the bench's
 * servers, next-min and bare among them): semi-spaces of up to 64 MB for V8's young generation, where it stops at
 * 16 MB on its own. A Next.js request allocates a great deal that dies young; in a young generation that small,
 * much of it is scavenged while still alive and promoted, then marked again on V8's helper threads. Against the
 * same build with V8's 16 MB, taking turns wave by wave (`bench/versus.ts --node-options`, docs/performance.md):
 * 1.09 ms less CPU per switch at 64 at once (cheaper in 13 rounds of 15), 1.41 and 2.03 in two earlier runs; a
 * lone page read + switch 1 to 3 ms less (8 to 10 of 15, within its noise); 32 MB gave 0.78 at 64 at once. The
 * cost is memory: up to 96 MB more per process.
 */
export const serverNodeOptions = ["--max-semi-space-size=64"];
