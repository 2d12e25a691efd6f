// How much of its window a stage draws at its width and height, and how large (issue 46): every cell drawn carries
// its number, at 12 px or more (20 px in lecture mode); where the window's columns don't all fit with their numbers,
// fewer of them are drawn, around the column kept in view, never all of them as bare colour; and in lecture mode,
// where its rows don't all fit the screen's height, fewer rows, around the row kept in view. No DOM:
// tests/js/fit.test.mjs sweeps it over widths and heights, and layout.js puts what it returns into the grid.

// The stage's font (Source Sans, as Streamlit serves it), in ems: a digit (its figures are tabular), the minus
// sign and the decimal point, as the browser's canvas measures them.
export const EM = { digit: 0.5, minus: 0.5, point: 0.25 };

// The numbers' font sizes, in px: at least `min` on a screen, up to `max` where every column fits; `lecture`
// in lecture mode, read from the back of a room.
export const FONT = { min: 12, max: 16, lecture: 20 };

export const PAD = 4; // the room a cell leaves beside its number, in px: 2 either side, where the chosen ring and the bands go
export const STRIPE = 3; // a statistic's coloured stripe, in px
export const GAP = 8; // between x and LN's μ and σ, and between them and LN's output, in px
export const WIDE = 640; // from this width, the 2 × 2 layout: both norms at once
export const MAX_CW = 64; // the widest cell

// A cell's decimals: 2 on a screen; 1 in lecture mode, where 20 px numbers cross a projector (model.js short).
export const placesFor = (present) => (present ? 1 : 2);

// The widest text short() writes for |v| < 100 with `places` decimals, in ems: "−0.00", "−15.4" (places 2).
export const textEms = (places) => EM.minus + EM.digit * (places + 1) + EM.point;

// The narrowest cell whose number fits at `font` px.
export const cellWidth = (font, places) => Math.ceil(textEms(places) * font) + PAD;

// A statistic's width (LN's μ and σ beside x): its number at `font` px and its stripe.
export const statWidth = (font, places) => cellWidth(font, places) + STRIPE;

// The heads' font: the column and row numbers, a little smaller than the cells' on a screen, never under FONT.min.
export const headFont = (font, present) => (present ? FONT.lecture : Math.max(FONT.min, font - 2));

// A row head's width for row numbers of `digits` digits at `font` px (and its 4 px padding, stage.css).
export const headWidth = (font, digits) => 10 + Math.ceil(font / 2) * digits;

// The layout of a window of C columns in a stage `width` px wide whose last row number has `digits` digits:
// wide or narrow; how many columns are drawn (`shown`) and how wide (`cw`, px); the numbers' font (`font`),
// the heads' (`head`), their decimals; the row heads' and the statistics' widths (`hw`, `sw`); and whether
// the numbers fit at all (`numbers`: false only where not one column fits, under 150 px or so).
//
// Wide, one row of the grid holds the row heads, x, a gap, LN's μ and σ, a gap and LN's output; narrow, the
// row heads, x, a gap, and the shown norm's μ and σ. The columns not drawn keep their tracks at 0 px (layout.js),
// and the grid's 2 px gaps between all tracks. The largest font whose every column fits wins; where none does,
// the smallest, with as many columns as fit.
export function plan({ width, C, digits, present }) {
  const wide = width >= WIDE;
  const places = placesFor(present);
  const blocks = wide ? 2 : 1; // x and LN's output side by side, or x alone
  const tracks = wide ? 2 * C + 5 : C + 4;
  const at = (font) => {
    const head = headFont(font, present);
    const hw = headWidth(head, digits);
    const sw = statWidth(font, places);
    const room = width - hw - 2 * sw - blocks * GAP - 2 * (tracks - 1);
    const need = cellWidth(font, places);
    const shown = Math.max(1, Math.min(C, Math.floor(room / (blocks * need))));
    const cw = Math.min(MAX_CW, Math.floor(room / (blocks * shown)));
    return { wide, places, font, head, hw, sw, shown, cw, numbers: cw >= need };
  };
  if (present) return at(FONT.lecture);
  for (let font = FONT.max; font > FONT.min; font--) {
    const p = at(font);
    if (p.shown === C && p.numbers) return p;
  }
  return at(FONT.min);
}

// The numbers' font in cells `ch` px tall: the plan's, or smaller where the stage had to shorten its cells to
// fit below what is above it, down to FONT.min (a cell is never shorter than that needs: lowCell).
export const fontFor = (p, ch) => (p.font === FONT.lecture ? p.font : Math.max(FONT.min, Math.min(p.font, Math.floor(ch * 0.75))));

// The shortest cell a stage shortens to: its number still fits, and a μ or σ of BN's under its 3 px stripe.
export const lowCell = (present) => (present ? FONT.lecture + 3 : 16);

// The first of `shown` rows or columns out of n to draw so that the k-th is among them: the run `first` drawn
// before where it still holds k (a click or a key in it moves nothing), else one centred on k.
export function around(k, shown, n, first) {
  if (first !== undefined && first >= 0 && first + shown <= n && k >= first && k < first + shown) return first;
  return Math.max(0, Math.min(k - Math.floor((shown - 1) / 2), n - shown));
}

// A wide stage's lines of cells, each one cell tall, for `shown` rows drawn: x's rows (LN's output beside them),
// BN's rows, which follow x's, and BN's μ and σ where there is a BN.
export const cellLines = (shown, bn) => 2 * shown + (bn ? 2 : 0);

// The rows a wide stage draws and their cells' height, so that its grid is `room` px tall at most. The grid is
// `fixed` px whatever its cells' height (titles, heads, the 2 px gaps, which a row not drawn keeps, as a column
// does) and cellLines(shown) cells tall: all R rows, with cells as tall as fit from `ch` down to `low` (lowCell:
// the number still fits); where they don't fit at `low`, as many rows as do, but no fewer than `least` (1 in
// lecture mode, where nothing of the stage goes below the screen's foot; R on a screen, where the page scrolls).
export function rowsFit({ R, least = 1, room, fixed, ch, low, bn }) {
  for (let shown = R; ; shown--) {
    const tall = Math.floor((room - fixed) / cellLines(shown, bn));
    if (tall >= low || shown <= Math.max(1, least)) return { shown, ch: Math.max(low, Math.min(ch, tall)) };
  }
}

// Label every k-th column whose number (`digits` digits at `font` px) fits over cells `cw` px wide.
export const headEvery = (font, digits, cw) => Math.max(1, Math.ceil((Math.ceil(font / 2) * digits + 4) / (cw + 2)));
