/**
 * Set-up of every file that uses PostgreSQL: a fresh database of its own, named after the file, so that
 * files can run side by side. `inject("databaseUrl")` answers its URL. It is left in place after the run,
 * to be looked at, and dropped at the next.
 */
import { expect } from "vitest";
import { prepareDatabase } from "../../db/prepare";
import { databaseForFile } from "../harness/databases";
import { provideToFile } from "./provide-to-file";

const testFile = expect.getState().testPath;
if (!testFile) throw new Error("file-database.ts is a vitest setup file");
// A project that runs the same files as another (`lease-pooled`) names its databases apart.
const name = databaseForFile(testFile, process.env.TEST_DATABASE_SUFFIX);
provideToFile("databaseUrl", await prepareDatabase(name, { fresh: true }));
provideToFile("namedStatements", true);
