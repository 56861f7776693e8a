"use client";

import { useEffect, useRef, useState } from "react";

export const speeds = [
  { label: "1×", factor: 1 },
  { label: "¼× (slow motion)", factor: 0.25 },
  { label: "1/10×", factor: 0.1 },
] as const;

/**
 * Plays a replay: while `playing`, each animation frame moves the moment shown on by the time passed times
 * the speed, and stops at `to`.
 */
export function usePlayback(to: number, setAt: (update: (current: number) => number) => void) {
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(0);
  const frame = useRef<number | null>(null);
  useEffect(() => {
    if (!playing) return;
    let last = performance.now();
    const tick = (now: number) => {
      const step = (now - last) * speeds[speed]!.factor;
      last = now;
      setAt((current) => {
        const next = Math.min(to, current + step);
        if (next >= to) setPlaying(false);
        return next;
      });
      frame.current = requestAnimationFrame(tick);
    };
    frame.current = requestAnimationFrame(tick);
    return () => {
      if (frame.current !== null) cancelAnimationFrame(frame.current);
    };
  }, [playing, speed, to, setAt]);
  return { playing, setPlaying, speed, setSpeed };
}
