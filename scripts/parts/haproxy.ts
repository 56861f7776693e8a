/**
 * HAProxy round-robin in front of the app instances (`--balance`): the system's haproxy, configured
 * under `.lab/haproxy-<port>/`, on the public port. Each answer says which instance served it: the header
 * `X-Lab-Instance` carries the server's id, which is the instance's number (LAB_INSTANCE).
 *
 * An instance that dies is left within about a second: checked every 500 ms, down after 2 failed checks. A
 * request it refused or never answered (the connection failed, or closed with no answer) is sent again to
 * another instance (`retry-on conn-failure empty-response`, `option redispatch`): the lease makes that safe,
 * a switch the dead instance had begun holds its lease and the retry is told 409 until when. What HAProxy
 * answers itself (no instance up, a broken or late answer) is problem+json with Retry-After, as the app's own.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { findProgram, partDirectory, startPart, type RunningPart } from "./part-process";

/** HAProxy's own answers, as the app's problems: [status, reason, slug, title, detail]. */
const ownAnswers = [
  [502, "Bad Gateway", "instance-failed", "The app instance failed to answer", "It closed the connection mid-answer."],
  [503, "Service Unavailable", "no-instance-available", "No app instance can answer now", "Every instance is down."],
  [504, "Gateway Timeout", "instance-timeout", "The app instance did not answer in time", "It took too long."],
] as const;

/** A raw HTTP answer for HAProxy's `errorfile`: the status line, the headers, a blank line, the body. */
function errorFile([status, reason, slug, title, detail]: (typeof ownAnswers)[number]): string {
  const body = JSON.stringify({
    type: `https://lease-lock-lab.dev/problems/${slug}`,
    title,
    status,
    detail: `${detail} Try again shortly.`,
  });
  const headers = [
    `HTTP/1.1 ${status} ${reason}`,
    "Content-Type: application/problem+json",
    "Retry-After: 1",
    "Cache-Control: no-store",
    "Connection: close",
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  return `${headers.join("\r\n")}\r\n\r\n${body}`;
}

export async function startHaproxy(port: number, instancePorts: number[]): Promise<RunningPart> {
  const program = findProgram("haproxy", "haproxy");
  // One directory per port: two balancers at once (test files side by side) never share a configuration.
  const directory = partDirectory(`haproxy-${port}`);
  const configFile = path.join(directory, "haproxy.cfg");
  const errorFiles = ownAnswers.map((answer) => {
    const file = path.join(directory, `${answer[0]}.http`);
    writeFileSync(file, errorFile(answer));
    return `  errorfile ${answer[0]} ${file}`;
  });
  writeFileSync(
    configFile,
    [
      "global",
      "  maxconn 2000",
      "defaults",
      "  mode http",
      "  timeout connect 5s",
      "  timeout client 120s",
      // The live stream is one long answer: a quiet one must not be cut after the usual server timeout.
      "  timeout server 1h",
      "  timeout tunnel 1h",
      "  retries 3",
      "  retry-on conn-failure empty-response",
      "  option redispatch 1",
      ...errorFiles,
      "frontend lab",
      `  bind 127.0.0.1:${port}`,
      "  default_backend instances",
      "backend instances",
      "  balance roundrobin",
      "  http-response set-header X-Lab-Instance %[srv_id]",
      "  default-server inter 500ms fall 2 rise 2",
      ...instancePorts.map(
        (instancePort, index) => `  server instance${index + 1} 127.0.0.1:${instancePort} id ${index + 1} check`,
      ),
      "",
    ].join("\n"),
  );
  return startPart({ name: `haproxy-${port}`, program, args: ["-db", "-f", configFile], port });
}

/**
 * HAProxy in front of the database under `--ha`: TCP, every connection to the node whose Patroni REST API
 * answers 200 to `GET /primary`, checked every 500 ms (down after 2 failed checks, up after one good one).
 * A node marked down has its connections cut (`on-marked-down shutdown-sessions`), so nobody keeps writing
 * to a demoted node; with no node up, a connection is closed at once and the app answers 503.
 */
export async function startDatabaseHaproxy(
  port: number,
  nodes: { name: string; port: number; apiPort: number }[],
): Promise<RunningPart> {
  const program = findProgram("haproxy", "haproxy");
  const configFile = path.join(partDirectory(`haproxy-${port}`), "haproxy.cfg");
  writeFileSync(
    configFile,
    [
      "global",
      "  maxconn 2000",
      "defaults",
      "  mode tcp",
      "  timeout connect 2s",
      // Pooled connections stay open while idle; the app's own timeouts bound its waits.
      "  timeout client 1h",
      "  timeout server 1h",
      "  timeout check 1s",
      "frontend database",
      `  bind 127.0.0.1:${port}`,
      "  default_backend primary",
      "backend primary",
      "  option httpchk",
      "  http-check send meth GET uri /primary",
      "  http-check expect status 200",
      "  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions",
      ...nodes.map((node) => `  server ${node.name} 127.0.0.1:${node.port} check port ${node.apiPort}`),
      "",
    ].join("\n"),
  );
  return startPart({ name: `haproxy-${port}`, program, args: ["-db", "-f", configFile], port });
}
