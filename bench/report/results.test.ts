import { describe, expect, it } from "vitest";
import { atMost, figureAgainst } from "./results";

describe("figureAgainst", () => {
  it("gives two decimals where they get the figure's own verdict", () => {
    expect(figureAgainst(1.17, atMost(1.15))).toBe("1.17");
    expect(figureAgainst(1.2, atMost(1.2))).toBe("1.20");
    expect(figureAgainst(0.79, atMost(0.8))).toBe("0.79");
  });

  it("gives as many more as rounding would take to put a miss on the limit", () => {
    // The 4c4d66a run's two instances: 481.777 ms against 1.2 × 400 ms showed "1.20 × 2L" and did not hold.
    expect(figureAgainst(481.777 / 400, atMost(1.2))).toBe("1.204");
    expect(figureAgainst(1.050004, atMost(1.05))).toBe("1.050004");
    expect(figureAgainst(108.04, atMost(108), 1)).toBe("108.04");
  });

  it("follows a verdict with a lower bound too", () => {
    const within = (ratio: number) => ratio >= 0.8 && ratio <= 1.3;
    expect(figureAgainst(0.797, within)).toBe("0.797");
    expect(figureAgainst(1.3004, within)).toBe("1.3004");
  });
});
