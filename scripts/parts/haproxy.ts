/**
 * HAProxy round-robin in front of the app instances (`--balance`): the system's haproxy, configured
 * under `.lab/haproxy-<port>/`, on the public port. Each answer says which instance served it: the header
 * `X-Lab-Instance` carries the server's id, which is the instance's number (LAB_INSTANCE).
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { findProgram, partDirectory, startPart, type RunningPart } from "./part-process";

export async function startHaproxy(port: number, instancePorts: number[]): Promise<RunningPart> {
  const program = findProgram("haproxy", "haproxy");
  // One directory per port: two balancers at once (test files side by side) never share a configuration.
  const configFile = path.join(partDirectory(`haproxy-${port}`), "haproxy.cfg");
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
      "frontend lab",
      `  bind 127.0.0.1:${port}`,
      "  default_backend instances",
      "backend instances",
      "  balance roundrobin",
      "  http-response set-header X-Lab-Instance %[srv_id]",
      ...instancePorts.map(
        (instancePort, index) =>
          `  server instance${index + 1} 127.0.0.1:${instancePort} id ${index + 1} check inter 1s`,
      ),
      "",
    ].join("\n"),
  );
  return startPart({ name: `haproxy-${port}`, program, args: ["-db", "-f", configFile], port });
}
