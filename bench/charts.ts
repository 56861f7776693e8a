/** Hand-built SVG line charts for docs/performance.md: axes, ticks, labels, a legend, predictions as dashed lines. */

export interface Series {
  label: string;
  color: string;
  points: [number, number][];
  dashed?: boolean;
}

export interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  xLog?: boolean;
  yLog?: boolean;
  xTicks?: number[];
  yTicks?: number[];
}

const width = 760;
const height = 420;
const margin = { left: 70, right: 230, top: 40, bottom: 55 };
const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const format = (value: number) => (value >= 1000 ? `${value / 1000} s` : `${Number(value.toPrecision(3))}`);

function niceTicks(low: number, high: number, log: boolean): number[] {
  if (log) {
    const ticks: number[] = [];
    for (let decade = Math.floor(Math.log10(low)); decade <= Math.ceil(Math.log10(high)); decade++)
      for (const step of [1, 2, 5]) {
        const tick = step * 10 ** decade;
        if (tick >= low && tick <= high) ticks.push(tick);
      }
    return ticks;
  }
  const step = 10 ** Math.floor(Math.log10((high - low) / 5));
  const size = [1, 2, 5, 10].map((each) => each * step).find((each) => (high - low) / each <= 6)!;
  const ticks: number[] = [];
  for (let tick = Math.ceil(low / size) * size; tick <= high + 1e-9; tick += size) ticks.push(Number(tick.toFixed(6)));
  return ticks;
}

export function lineChart(chart: Chart): string {
  const all = chart.series.flatMap((series) => series.points);
  const xs = all.map(([x]) => x);
  const ys = all.map(([, y]) => y);
  const [xMin, xMax] = [Math.min(...xs), Math.max(...xs)];
  const [yMin, yMax] = chart.yLog ? [Math.min(...ys) * 0.8, Math.max(...ys) * 1.25] : [0, Math.max(...ys) * 1.08];
  const scale = (value: number, low: number, high: number, log = false) =>
    log ? (Math.log(value) - Math.log(low)) / (Math.log(high) - Math.log(low)) : (value - low) / (high - low || 1);
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const px = (x: number) => margin.left + scale(x, xMin, xMax, chart.xLog) * plotWidth;
  const py = (y: number) => margin.top + (1 - scale(y, yMin, yMax, chart.yLog)) * plotHeight;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
      `viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${margin.left}" y="22" font-size="15" font-weight="600">${escape(chart.title)}</text>`,
  ];
  for (const tick of chart.xTicks ?? niceTicks(xMin, xMax, chart.xLog ?? false)) {
    parts.push(
      `<line x1="${px(tick)}" x2="${px(tick)}" y1="${margin.top}" y2="${margin.top + plotHeight}" stroke="#eee"/>`,
      `<text x="${px(tick)}" y="${margin.top + plotHeight + 18}" text-anchor="middle">${format(tick)}</text>`,
    );
  }
  for (const tick of chart.yTicks ?? niceTicks(yMin, yMax, chart.yLog ?? false)) {
    parts.push(
      `<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${py(tick)}" y2="${py(tick)}" stroke="#eee"/>`,
      `<text x="${margin.left - 8}" y="${py(tick) + 4}" text-anchor="end">${format(tick)}</text>`,
    );
  }
  parts.push(
    `<rect x="${margin.left}" y="${margin.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#888"/>`,
    `<text x="${margin.left + plotWidth / 2}" y="${height - 12}" text-anchor="middle">${escape(chart.xLabel)}</text>`,
    `<text transform="translate(16 ${margin.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">${escape(chart.yLabel)}</text>`,
  );
  chart.series.forEach((series, index) => {
    const path = series.points.map(([x, y], at) => `${at === 0 ? "M" : "L"}${px(x).toFixed(1)},${py(y).toFixed(1)}`);
    const dash = series.dashed ? ` stroke-dasharray="6 4"` : "";
    parts.push(`<path d="${path.join(" ")}" fill="none" stroke="${series.color}" stroke-width="2"${dash}/>`);
    if (!series.dashed)
      for (const [x, y] of series.points)
        parts.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${series.color}"/>`);
    const legendY = margin.top + 8 + index * 18;
    const legendX = margin.left + plotWidth + 16;
    parts.push(
      `<line x1="${legendX}" x2="${legendX + 24}" y1="${legendY}" y2="${legendY}" stroke="${series.color}" stroke-width="2"${dash}/>`,
      `<text x="${legendX + 30}" y="${legendY + 4}">${escape(series.label)}</text>`,
    );
  });
  parts.push("</svg>");
  return parts.join("\n") + "\n";
}
