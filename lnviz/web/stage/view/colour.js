// The value scale: ColorBrewer PRGn, purple below 0, white at 0, green above. Colour-blind
// safe, and it holds neither LN's blue (#0072B2) nor BN's vermillion (#D55E00), which mean
// "LN" and "BN" everywhere on the stage (stage.css).

const PRGN = [
  "#40004b", "#762a83", "#9970ab", "#c2a5cf", "#e7d4e8", "#f7f7f7",
  "#d9f0d3", "#a6dba0", "#5aae61", "#1b7837", "#00441b",
].map((h) => [1, 3, 5].map((k) => parseInt(h.slice(k, k + 2), 16)));

function interpolate(t) {
  const u = t * (PRGN.length - 1);
  const k = Math.min(Math.floor(u), PRGN.length - 2);
  return PRGN[k].map((c, n) => Math.round(c + (u - k) * (PRGN[k + 1][n] - c)));
}

// Black or white text, whichever contrasts more with the cell (WCAG relative luminance).
function ink(rgb) {
  const [r, g, b] = rgb.map((c) => {
    const u = c / 255;
    return u <= 0.03928 ? u / 12.92 : ((u + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 ? "#111" : "#fff";
}

// 256 shades of the scale with their text colours, computed once: a drag frame only looks up.
const SHADES = Array.from({ length: 256 }, (_, k) => {
  const rgb = interpolate(k / 255);
  return { fill: `rgb(${rgb})`, ink: ink(rgb) };
});

// The shade of v on a scale from −range (purple) through 0 (white) to +range (green).
export function shade(v, range) {
  return SHADES[Math.round(Math.min(Math.max((v / range + 1) / 2, 0), 1) * 255)];
}

// The largest |v| of the arrays' finite values (1 if none): a scale's range.
export function maxAbs(...arrays) {
  let m = 0;
  for (const a of arrays) for (const v of a) if (Number.isFinite(v)) m = Math.max(m, Math.abs(v));
  return m > 0 ? m : 1;
}
