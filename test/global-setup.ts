import type { TestProject } from "vitest/node";
import { prepareDatabase } from "../db/prepare";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  project.provide("databaseUrl", await prepareDatabase("leaselab_test", { fresh: true }));
}
