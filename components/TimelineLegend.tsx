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
          <span className="swatch lease" aria-hidden="true" /> lease, from acquisition to release or expiry (after a
          release, a faint tick marks the expiry it no longer needed; a lease kept for an unknown outcome runs to its
          expiry and says why)
        </li>
        <li>
          <span className="swatch running" aria-hidden="true" /> running: faded, dashed outline, growing with the now
          line
        </li>
        <li>
          <span className="swatch collision" aria-hidden="true" /> collision: a red strip above the bar, another
          operation changed the same provider account at the same time
        </li>
        <li>
          <span className="swatch applied-late" aria-hidden="true" /> applied late: hatched, the provider carried the
          call out after the caller gave up
        </li>
        <li>
          <span className="swatch failed" aria-hidden="true" /> refused / failed: red outline; requests refused while
          another held the lease share one lane
        </li>
      </ul>
    </div>
  );
}
