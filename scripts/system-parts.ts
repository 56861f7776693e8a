/**
 * `npm run system-parts`: what `npm test` does first, alone. Installs the system's programs the tests need
 * (scripts/parts/system-parts.ts) when it runs as root with apt-get, else prints the one command that does.
 */
import { ensureSystemParts, systemParts } from "./parts/system-parts";

const stop = ensureSystemParts();
if (stop) {
  console.error(stop);
  process.exit(1);
}
console.log(`[system parts] installed: ${systemParts.map((part) => part.debianPackage).join(", ")}`);
