/** The lab in the product switch's place: its strategies, timeline and faults, chosen by the composition root. */
import { startReconciler } from "../switch/reconciler";
import type { SwitchLayer } from "../switch/service";
import { followLabSettings } from "./settings";
import { promote } from "./promote";
import { labReconcilePolicy } from "./reconciler";
import { rename } from "./rename";
import { relayRunningLanesToWatchers } from "./stream";

export const labSwitchLayer: SwitchLayer = {
  promote,
  rename,
  reconcilePolicy: labReconcilePolicy,
  start(db, provider) {
    // Each instance follows the settings every instance shares; the reconciler runs under them.
    followLabSettings(db);
    relayRunningLanesToWatchers();
    startReconciler(db, () => labReconcilePolicy(db, provider));
  },
};
