/** `npm run provider:stop` stops the simulated provider that `npm run dev` started and left running. */
import { config } from "../lib/core/config";
import { stopProvider } from "../lib/lab/provider-process-control";

const [command] = process.argv.slice(2);
if (command !== "stop") throw new Error("usage: provider stop");
console.log(
  (await stopProvider(config.providerPort))
    ? `the simulated provider on port ${config.providerPort} stopped`
    : `no simulated provider was running on port ${config.providerPort}`,
);
