/** The TTL trade-off a run measured: the share of switches that outlived each TTL, and the lockout after a crash. */
export interface SweepPoint {
  ttlMs: number;
  share: number;
  lockedAfterCrashMs: number;
}

const width = 420;
const height = 180;
const margin = { left: 44, right: 52, top: 12, bottom: 32 };

/** Whether a run's `observed.sweep` has the shape this chart draws. */
export const isSweep = (value: unknown): value is SweepPoint[] =>
  Array.isArray(value) &&
  value.length > 1 &&
  value.every((point) => typeof point?.ttlMs === "number" && typeof point?.share === "number");

const bottom = height - margin.bottom;

/** The axes: the share on the left, the lockout on the right, the swept TTLs below. */
function Axes({ sweep, x, maxLockout }: { sweep: SweepPoint[]; x: (ttlMs: number) => number; maxLockout: number }) {
  return (
    <>
      <line x1={margin.left} y1={bottom} x2={width - margin.right} y2={bottom} stroke="currentColor" />
      <line x1={margin.left} y1={margin.top} x2={margin.left} y2={bottom} stroke="currentColor" />
      <text x={margin.left - 4} y={margin.top + 4} fontSize="10" textAnchor="end">
        100%
      </text>
      <text x={margin.left - 4} y={bottom} fontSize="10" textAnchor="end">
        0%
      </text>
      <text x={width - margin.right + 4} y={margin.top + 4} fontSize="10">
        {maxLockout} ms
      </text>
      {sweep.map((point) => (
        <text key={point.ttlMs} x={x(point.ttlMs)} y={bottom + 12} fontSize="9" textAnchor="middle">
          {point.ttlMs}
        </text>
      ))}
      <text x={(margin.left + width - margin.right) / 2} y={height - 4} fontSize="10" textAnchor="middle">
        TTL (ms)
      </text>
    </>
  );
}

export function TtlSweepChart({ sweep, recommendedTtlMs }: { sweep: SweepPoint[]; recommendedTtlMs: number | null }) {
  const maxTtl = Math.max(...sweep.map((point) => point.ttlMs), recommendedTtlMs ?? 0);
  const maxLockout = Math.max(...sweep.map((point) => point.lockedAfterCrashMs));
  const x = (ttlMs: number) => margin.left + (ttlMs / maxTtl) * (width - margin.left - margin.right);
  const plotHeight = height - margin.top - margin.bottom;
  const yShare = (share: number) => margin.top + (1 - share) * plotHeight;
  const yLockout = (ms: number) => margin.top + (1 - ms / maxLockout) * plotHeight;
  const line = (y: (point: SweepPoint) => number) =>
    sweep.map((point) => `${x(point.ttlMs).toFixed(1)},${y(point).toFixed(1)}`).join(" ");
  return (
    <figure className="sweep-chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label="TTL trade-off: expired under a switch vs. locked out after a crash"
      >
        <Axes sweep={sweep} x={x} maxLockout={maxLockout} />
        <polyline points={line((point) => yShare(point.share))} fill="none" stroke="#c0392b" strokeWidth="2" />
        <polyline
          points={line((point) => yLockout(point.lockedAfterCrashMs))}
          fill="none"
          stroke="#2c6fbb"
          strokeWidth="2"
          strokeDasharray="4 3"
        />
        {recommendedTtlMs !== null && (
          <line
            x1={x(recommendedTtlMs)}
            y1={margin.top}
            x2={x(recommendedTtlMs)}
            y2={bottom}
            stroke="#1e7a46"
            strokeWidth="2"
          />
        )}
      </svg>
      <figcaption>
        <span style={{ color: "#c0392b" }}>solid: share of switches that outlived the TTL (a steal is possible)</span>;{" "}
        <span style={{ color: "#2c6fbb" }}>dashed: time locked out after a crash</span>
        {recommendedTtlMs !== null && (
          <>
            ; <span style={{ color: "#1e7a46" }}>green: recommended TTL, {recommendedTtlMs} ms</span>
          </>
        )}
      </figcaption>
    </figure>
  );
}
