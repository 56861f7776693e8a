import { phaseNames, type PhaseName } from "@/lib/lab/lane";

const phaseWords: Record<PhaseName, string> = {
  waiting: "waiting (pool, lock)",
  acquire: "acquire",
  recover: "recover",
  unlink: "unlink",
  link: "link",
  save: "save",
  renew: "renew",
  release: "release",
  paused: "paused (lab fault)",
  crashed: "crashed (lab fault)",
};

/** What each colour and mark of the timeline means: the phases, then the states a bar can be in. */
export function TimelineLegend() {
  return (
    <div className="tl-legend">
      <ul aria-label="Phases">
        {phaseNames.map((name) => (
          <li key={name}>
            <span className={`swatch tl-${name}`} aria-hidden="true" /> {phaseWords[name]}
          </li>
        ))}
      </ul>
      <ul aria-label="Marks">
        <li>
          <span className="swatch lease" aria-hidden="true" /> lease, to its release or expiry (a faint tick: the expiry
          a release made moot)
        </li>
        <li>
          <span className="swatch running" aria-hidden="true" /> running (faded, dashed)
        </li>
        <li>
          <span className="swatch collision" aria-hidden="true" /> collision: same account, same time (red strip)
        </li>
        <li>
          <span className="swatch applied-late" aria-hidden="true" /> applied late by the provider (hatched)
        </li>
        <li>
          <span className="swatch failed" aria-hidden="true" /> refused / failed (red outline; refusals share a lane)
        </li>
      </ul>
    </div>
  );
}
