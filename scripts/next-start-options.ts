/**
 * What every `next start` of this project is given. A server that closes an idle keep-alive connection races
 * a client that reuses it: a request written as the server's timer fires is reset (ECONNRESET, "other side
 * closed"), and a POST is not sent again. Node closes after 5 s, and a loaded event loop fires that timer
 * late, after the request has arrived: seen in the model checker at a load average of 50-80. So the server
 * waits longer than its clients keep a connection (undici 4 s; HAProxy and browsers close theirs first),
 * as servers behind a balancer are told to.
 */
export const nextStartOptions = ["--keepAliveTimeout", "65000"];
