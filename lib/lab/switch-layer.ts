/** The lab on top of the product's switch: its strategies, timeline and faults, installed at start-up. */
import type { SwitchLayer } from "../switch/service";
import { promote } from "./promote";
import { labReconcilePolicy } from "./reconciler";
import { rename } from "./rename";

export const labSwitchLayer: SwitchLayer = { promote, rename, reconcilePolicy: labReconcilePolicy };
