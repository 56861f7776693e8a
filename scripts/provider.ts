/**
 * `npm run provider:stop` stops the simulated provider that this checkout's `npm run dev` or `npm start` started
 * and left running, and no other: another checkout's, answering on IDP_PORT, is named and left alone.
 */
import { config } from "../lib/core/config";
import { probeProvider, stopProvider } from "../lib/lab/provider-process-control";

const [command] = process.argv.slice(2);
if (command !== "stop") throw new Error("usage: provider stop");
const stopped = await stopProvider();
if (stopped) console.log(`the simulated provider on port ${stopped.port} (pid ${stopped.pid}) stopped`);
else {
  console.log("no simulated provider of this checkout's was running");
  const onPort = await probeProvider(`http://127.0.0.1:${config.providerPort}`);
  if (typeof onPort === "object")
    console.log(
      `the one on port ${config.providerPort} (pid ${onPort.pid}, its state in ${onPort.database}) ` +
        "is not recorded as this checkout's (.lab/provider.json): left running",
    );
}
