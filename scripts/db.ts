/** `npm run db:stop` stops the embedded PostgreSQL that `npm run dev` started and left running. */
import { stopDatabaseServer } from "../db/server";

const [command] = process.argv.slice(2);
if (command !== "stop") throw new Error("usage: db stop");
console.log((await stopDatabaseServer()) ? "embedded PostgreSQL stopped" : "no embedded PostgreSQL was running");
