// Hand-written SVG charts for the bench reports (no dependency, no external service): a line chart (linear or
// log axes, step lines, reference lines) and a grouped bar chart (linear or log y). Plain SVG 1.1 that GitHub
// renders when a README embeds it with a relative path.

export const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

const FONT = 'font-family="Helvetica, Arial, sans-serif"';
const escape = (text) => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (n) => (Math.round(n * 100) / 100).toString();

/** Round tick values covering [min, max] for a linear axis (1, 2, 5 x 10^n steps). */
function linearTicks(min, max, count = 6) {
  const span = max - min || 1;
  const raw = span / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw);
  const ticks = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) ticks.push(Math.round(v / step) * step);
  return ticks;
}

/** Powers of ten covering [min, max] for a log axis. */
function logTicks(min, max) {
  const ticks = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) ticks.push(10 ** e);
  return ticks;
}

/** A scale: maps a value of [min, max] onto [from, to] pixels; `log` for a logarithmic axis (values > 0). */
function scale({ min, max, from, to, log = false }) {
  const f = log ? Math.log10 : (v) => v;
  const a = f(min);
  const b = f(max);
  return (v) => from + ((f(v) - a) / (b - a || 1)) * (to - from);
}

/** 1,234 / 12k / 1.2M: short tick labels. */
export function shortNumber(v) {
  const abs = Math.abs(v);
  if (abs >= 1e6) return `${num(v / 1e6)}M`;
  if (abs >= 1e4) return `${num(v / 1e3)}k`;
  return num(v).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function frame({ width, height, title }) {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escape(title)}</text>`,
  ];
}

function axes({ plot, xLabel, yLabel, xTicks, yTicks, x, y, xFormat, yFormat }) {
  const out = [];
  for (const v of yTicks) {
    const py = y(v);
    out.push(`<line x1="${plot.left}" y1="${num(py)}" x2="${plot.right}" y2="${num(py)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${plot.left - 6}" y="${num(py + 4)}" text-anchor="end">${escape(yFormat(v))}</text>`);
  }
  for (const v of xTicks) {
    const px = x(v);
    out.push(`<line x1="${num(px)}" y1="${plot.bottom}" x2="${num(px)}" y2="${plot.bottom + 5}" stroke="#333"/>`);
    out.push(`<text x="${num(px)}" y="${plot.bottom + 18}" text-anchor="middle">${escape(xFormat(v))}</text>`);
  }
  out.push(`<line x1="${plot.left}" y1="${plot.bottom}" x2="${plot.right}" y2="${plot.bottom}" stroke="#333"/>`);
  out.push(`<line x1="${plot.left}" y1="${plot.top}" x2="${plot.left}" y2="${plot.bottom}" stroke="#333"/>`);
  out.push(`<text x="${(plot.left + plot.right) / 2}" y="${plot.bottom + 36}" text-anchor="middle">${escape(xLabel)}</text>`);
  const cy = (plot.top + plot.bottom) / 2;
  out.push(`<text x="16" y="${cy}" text-anchor="middle" transform="rotate(-90 16 ${cy})">${escape(yLabel)}</text>`);
  return out;
}

/** Legend in rows under the plot; each item a colour swatch (solid or dashed) and a name. */
function legend(items, { left, top, width }) {
  const out = [];
  let px = left;
  let py = top;
  for (const item of items) {
    const w = 34 + item.name.length * 6.6;
    if (px + w > left + width) {
      px = left;
      py += 18;
    }
    const dash = item.dash ? ` stroke-dasharray="${item.dash}"` : '';
    out.push(`<line x1="${num(px)}" y1="${py}" x2="${num(px + 22)}" y2="${py}" stroke="${item.color}" stroke-width="3"${dash}/>`);
    out.push(`<text x="${num(px + 27)}" y="${py + 4}">${escape(item.name)}</text>`);
    px += w + 14;
  }
  return { svg: out, bottom: py + 10 };
}

const legendRows = (items, width) => {
  let rows = 1;
  let px = 0;
  for (const item of items) {
    const w = 34 + item.name.length * 6.6 + 14;
    if (px + w > width) {
      rows++;
      px = 0;
    }
    px += w;
  }
  return rows;
};

/**
 * Line chart. series: [{ name, points: [[x, y], ...], color?, dash?, width? }]; refLines: [{ y, label, color? }].
 * `step` draws each point's value until the next point (counts that change in jumps). `xLog`/`yLog` for
 * logarithmic axes. Returns the SVG text.
 */
export function lineChart({ title, xLabel, yLabel, series, refLines = [], width = 960, height = 440, step = false, xLog = false, yLog = false, xFormat = shortNumber, yFormat = shortNumber, yMin, yMax, xTicks: fixedXTicks }) {
  const items = series.map((s, i) => ({ ...s, color: s.color ?? PALETTE[i % PALETTE.length] }));
  const legendHeight = legendRows(items, width - 90) * 18 + 10;
  const plot = { left: 70, right: width - 20, top: 36, bottom: height - 52 - legendHeight };
  const xs = items.flatMap((s) => s.points.map((p) => p[0]));
  const ys = [...items.flatMap((s) => s.points.map((p) => p[1])), ...refLines.map((r) => r.y)];
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const lowY = yMin ?? (yLog ? Math.min(...ys.filter((v) => v > 0)) : 0);
  const highY = yMax ?? Math.max(...ys) * (yLog ? 1.5 : 1.08);
  const yTicks = yLog ? logTicks(lowY, highY) : linearTicks(lowY, highY);
  const yLo = yLog ? Math.min(lowY, yTicks[0]) : Math.min(lowY, yTicks[0]);
  const yHi = Math.max(highY, yTicks.at(-1));
  const xTicks = fixedXTicks ?? (xLog ? logTicks(x0, x1) : linearTicks(x0, x1, 12));
  const x = scale({ min: x0, max: x1, from: plot.left, to: plot.right, log: xLog });
  const y = scale({ min: yLo, max: yHi, from: plot.bottom, to: plot.top, log: yLog });

  const out = frame({ width, height, title });
  out.push(...axes({ plot, xLabel, yLabel, xTicks: xTicks.filter((v) => v >= x0 && v <= x1), yTicks, x, y, xFormat, yFormat }));
  for (const ref of refLines) {
    const py = num(y(ref.y));
    out.push(`<line x1="${plot.left}" y1="${py}" x2="${plot.right}" y2="${py}" stroke="${ref.color ?? '#000'}" stroke-width="1" stroke-dasharray="6 4"/>`);
    out.push(`<text x="${plot.right - 4}" y="${py - 4}" text-anchor="end" fill="${ref.color ?? '#000'}">${escape(ref.label)}</text>`);
  }
  // Widest first, so lines that coincide still show every colour at their edges.
  items.forEach((s, i) => {
    const coords = [];
    s.points.forEach(([px, py], j) => {
      if (step && j > 0) coords.push(`${num(x(px))},${num(y(s.points[j - 1][1]))}`);
      coords.push(`${num(x(px))},${num(y(py))}`);
    });
    const strokeWidth = s.width ?? Math.max(1.2, 2 + (items.length - i) * 0.6);
    const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : '';
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="${num(strokeWidth)}" stroke-opacity="0.85" stroke-linejoin="round"${dash} points="${coords.join(' ')}"/>`);
    if (!step) for (const [px, py] of s.points) out.push(`<circle cx="${num(x(px))}" cy="${num(y(py))}" r="3" fill="${s.color}"/>`);
  });
  out.push(...legend(items, { left: plot.left, top: plot.bottom + 52, width: width - 90 }).svg);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/**
 * Grouped bar chart: one group per category, one bar per series. series: [{ name, values: [per category] }]
 * (null = no bar). `yLog` for values spanning orders of magnitude; each bar is labelled with its value.
 */
export function barChart({ title, xLabel, yLabel, categories, series, width = 960, height = 460, yLog = false, yFormat = shortNumber, refLines = [] }) {
  const items = series.map((s, i) => ({ ...s, color: s.color ?? PALETTE[i % PALETTE.length] }));
  const legendHeight = legendRows(items, width - 90) * 18 + 10;
  const plot = { left: 70, right: width - 20, top: 36, bottom: height - 52 - legendHeight };
  const values = items.flatMap((s) => s.values.filter((v) => v != null && v > 0));
  const lowY = yLog ? Math.min(...values) : 0;
  const yTicks = yLog ? logTicks(lowY, Math.max(...values)) : linearTicks(0, Math.max(...values) * 1.1);
  const yLo = yLog ? yTicks[0] : 0;
  const yHi = yTicks.at(-1);
  const y = scale({ min: yLo, max: yHi, from: plot.bottom, to: plot.top, log: yLog });
  const groupWidth = (plot.right - plot.left) / categories.length;
  const barWidth = (groupWidth * 0.8) / items.length;

  const out = frame({ width, height, title });
  out.push(...axes({ plot, xLabel, yLabel, xTicks: [], yTicks, x: () => 0, y, xFormat: String, yFormat }));
  categories.forEach((category, c) => {
    const gx = plot.left + c * groupWidth;
    out.push(`<text x="${num(gx + groupWidth / 2)}" y="${plot.bottom + 18}" text-anchor="middle">${escape(category)}</text>`);
    items.forEach((s, i) => {
      const v = s.values[c];
      if (v == null || v <= 0) return;
      const bx = gx + groupWidth * 0.1 + i * barWidth;
      const by = y(v);
      out.push(`<rect x="${num(bx)}" y="${num(by)}" width="${num(barWidth - 2)}" height="${num(plot.bottom - by)}" fill="${s.color}"><title>${escape(`${s.name}, ${category}: ${v}`)}</title></rect>`);
      out.push(`<text x="${num(bx + barWidth / 2 - 1)}" y="${num(by - 3)}" text-anchor="middle" font-size="9">${escape(shortNumber(v))}</text>`);
    });
  });
  for (const ref of refLines) {
    const py = num(y(ref.y));
    out.push(`<line x1="${plot.left}" y1="${py}" x2="${plot.right}" y2="${py}" stroke="${ref.color ?? '#000'}" stroke-dasharray="6 4"/>`);
    out.push(`<text x="${plot.right - 4}" y="${py - 4}" text-anchor="end">${escape(ref.label)}</text>`);
  }
  out.push(...legend(items, { left: plot.left, top: plot.bottom + 52, width: width - 90 }).svg);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
