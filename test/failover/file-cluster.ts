/**
 * Set-up of every file of the failover tier, before its database (`file-database.ts`): the file's database goes on
 * the tier's pair, and the file starts on a primary promoted just before it (the one before was killed, and
 * follows it again): the lease's suite runs across a promotion between each of its files.
 */
import { inject } from "vitest";
import { failover } from "./cluster";

process.env.DATABASE_URL = inject("clusterUrl");
await failover();
