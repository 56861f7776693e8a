import { hostname } from "node:os";

/** This app process, as lanes and pool messages name it (`--instances N` numbers them: LAB_INSTANCE). */
export const instanceId =
  process.env.APP_INSTANCE ?? process.env.LAB_INSTANCE ?? `${hostname()}:${process.env.PORT ?? process.pid}`;
