import { describe, expect, it } from "vitest";
import { ensureSystemParts, planSystemParts, type Machine } from "./system-parts";

const everything = ["chromium", "pgbouncer", "redis-server", "haproxy", "apt-get"];

/** A machine with `programs` installed; what its apt-get installs is added to them. */
function machine(programs: string[], { isRoot = true, hasPlaywrightChromium = false, aptInstalls = true } = {}) {
  const installed = new Set(programs);
  const ran: string[] = [];
  const fake: Machine = {
    locate: (program) => (installed.has(program) ? `/usr/bin/${program}` : null),
    hasPlaywrightChromium,
    isRoot,
    run(program, args) {
      ran.push([program, ...args].join(" "));
      if (aptInstalls && args[0] === "install")
        args.filter((arg) => !arg.startsWith("-")).forEach((p) => installed.add(p));
    },
  };
  return { fake, ran };
}

describe("the system parts npm test needs", () => {
  it("are ready when every program is found, Chromium as Debian's, as chromium-browser or Playwright's own", () => {
    expect(planSystemParts(machine(everything).fake)).toEqual({ kind: "ready" });
    const browserOnly = ["chromium-browser", "pgbouncer", "redis-server", "haproxy"];
    expect(planSystemParts(machine(browserOnly).fake)).toEqual({ kind: "ready" });
    const noDebianChromium = everything.filter((program) => program !== "chromium");
    expect(planSystemParts(machine(noDebianChromium, { hasPlaywrightChromium: true }).fake)).toEqual({ kind: "ready" });
  });

  it("as root with apt-get: installs exactly the missing ones, after an update, and goes on", () => {
    const { fake, ran } = machine(["pgbouncer", "apt-get"]);
    const logged: string[] = [];
    expect(ensureSystemParts(fake, (line) => logged.push(line))).toBeNull();
    expect(ran).toEqual([
      "/usr/bin/apt-get update -qq",
      "/usr/bin/apt-get install -y -qq chromium redis-server haproxy",
    ]);
    expect(logged).toEqual(["[system parts] installing chromium, redis-server, haproxy with apt-get"]);
    expect(planSystemParts(fake)).toEqual({ kind: "ready" });
  });

  it("stops when apt-get ran and a program is still missing, naming it", () => {
    const { fake } = machine(["pgbouncer", "haproxy", "chromium", "apt-get"], { aptInstalls: false });
    expect(ensureSystemParts(fake, () => {})).toBe("apt-get did not install redis-server: see its output above");
  });

  it("stops at once with the one command that installs them when it may not install (not root, or no apt-get)", () => {
    const notRoot = machine(["apt-get", "haproxy"], { isRoot: false });
    expect(ensureSystemParts(notRoot.fake)).toBe(
      "npm test needs chromium, pgbouncer, redis-server, not installed here. " +
        "Install them with: sudo apt-get install -y chromium pgbouncer redis-server",
    );
    expect(notRoot.ran).toEqual([]);
    const noAptGet = machine(everything.filter((program) => !["apt-get", "redis-server"].includes(program)));
    expect(ensureSystemParts(noAptGet.fake)).toBe(
      "npm test needs redis-server, not installed here. Install it with: apt-get install -y redis-server",
    );
    expect(noAptGet.ran).toEqual([]);
  });
});
