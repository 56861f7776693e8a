import { describe, expect, it } from "vitest";
import { figureAgainst } from "./results";

describe("figureAgainst", () => {
  it("gives two decimals where they fall on the figure's side of the limit", () => {
    expect(figureAgainst(1.17, 1.15)).toBe("1.17");
    expect(figureAgainst(1.2, 1.2)).toBe("1.20");
    expect(figureAgainst(0.79, 0.8)).toBe("0.79");
  });

  it("gives more where rounding would put a miss on the limit", () => {
    // The committed run's two instances: 481.777 ms against 1.2 × 400 ms showed "1.20 × 2L" and did not hold.
    expect(figureAgainst(481.777 / 400, 1.2)).toBe("1.204");
    expect(figureAgainst(1.05004, 1.05)).toBe("1.0500");
    expect(figureAgainst(108.04, 108, 1)).toBe("108.04");
  });
});
