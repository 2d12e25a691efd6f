// The value scale: ColorBrewer PRGn, purple below 0, white at 0, green above. Colour-blind
// safe, and it holds neither LN's blue nor BN's vermillion, which mean "LN" and "BN" everywhere
// on the stage (stage.css). Every colour is lnviz.figures.theme's, sent with the payload.

// The scale's stops: theme.DIVERGING's, from the payload's colors.scale (useTheme), as [r, g, b].
let PRGN = [];

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

// 256 shades of the scale with their text colours, computed once per scale: a drag frame only looks up.
let SHADES = [];
let scaleKey = "";

// The theme's colours (lnviz.figures.theme, as the payload's `colors`): LN's, BN's and the accent as
// CSS variables on the stage (stage.css uses var(--ln), ...), and the value scale for the canvas
// and its legend.
export function useTheme(root, colors) {
  for (const n of ["ln", "bn", "accent"]) root.style.setProperty(`--${n}`, colors[n]);
  const key = colors.scale.join(); // equally spaced stops
  root.style.setProperty("--scale", `linear-gradient(90deg, ${key})`);
  if (key === scaleKey) return;
  scaleKey = key;
  PRGN = colors.scale.map((c) => c.match(/\d+/g).slice(0, 3).map(Number)); // "rgb(64,0,75)"
  SHADES = Array.from({ length: 256 }, (_, k) => {
    const rgb = interpolate(k / 255);
    return { fill: `rgb(${rgb})`, ink: ink(rgb) };
  });
}

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
