/**
 * A TCP proxy in front of the database that can stop passing bytes either way while every connection stays
 * open: a frozen server, or a network gone quiet, which no socket error tells a client (the proxy's kernel
 * still takes what the client sends). Thawed, it passes them on again.
 */
import net from "node:net";

export interface FreezableProxy {
  /** The database's URL, through the proxy. */
  url: string;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function freezableProxy(databaseUrl: string): Promise<FreezableProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<net.Socket>();
  let frozen = false;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    if (frozen) socket.pause();
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    track(client);
    track(upstream);
    // Not `pipe`: it resumes a paused source when its destination drains.
    client.on("data", (chunk) => upstream.write(chunk));
    upstream.on("data", (chunk) => client.write(chunk));
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    freeze() {
      frozen = true;
      for (const socket of sockets) socket.pause();
    },
    thaw() {
      frozen = false;
      for (const socket of sockets) socket.resume();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
