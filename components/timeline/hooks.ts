"use client";

import { useEffect, useRef, useState } from "react";
import type { Layout } from "./geometry";

/** An element's width in px, followed as it changes (800 until it is measured). */
export function useWidth<T extends Element>(): [React.RefObject<T | null>, number] {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(800);
  useEffect(() => {
    if (!ref.current) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.floor(entry!.contentRect.width)));
    observer.observe(ref.current);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

/**
 * The moving now, while a lane runs: each animation frame moves the running bars' ends and the now line
 * without drawing the rest; past the picture's horizon, `onHorizon` lays out a new picture.
 */
export function useMovingNow(
  svgRef: React.RefObject<SVGSVGElement | null>,
  {
    running,
    layout,
    clockOffsetMs,
    onHorizon,
  }: {
    running: boolean;
    layout: Layout;
    clockOffsetMs: number;
    onHorizon: (now: number) => void;
  },
): void {
  useEffect(() => {
    if (!running) return;
    let frame = requestAnimationFrame(function tick() {
      const current = Date.now() + clockOffsetMs;
      if (current > layout.scale.to) {
        onHorizon(current);
        return;
      }
      const nowX = layout.scale.x(current);
      for (const bar of svgRef.current?.querySelectorAll<SVGElement>("[data-running-from]") ?? []) {
        const from = layout.scale.x(Number(bar.dataset.runningFrom));
        if (bar instanceof SVGLineElement) bar.setAttribute("x2", String(nowX));
        else bar.setAttribute("width", String(Math.max(3, nowX - from)));
      }
      const line = svgRef.current?.querySelector(".tl-now");
      line?.setAttribute("x1", String(nowX));
      line?.setAttribute("x2", String(nowX));
      frame = requestAnimationFrame(tick);
    });
    return () => cancelAnimationFrame(frame);
  }, [running, layout, clockOffsetMs, onHorizon, svgRef]);
}
