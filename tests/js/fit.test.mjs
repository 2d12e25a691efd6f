// The stage's fit for its width and height (lnviz/web/stage/view/fit.js, issue 46) under Node's own runner: swept
// over every stage width from 300 px (a 360 px phone's stage is 328) to 2,600 px, screen and lecture mode, every
// cell drawn has room for the widest number model.js writes, at 12 px or more (20 in lecture mode), and the grid is
// no wider than the stage; swept over every room for the grid's height, in lecture mode the rows drawn, at a cell
// height their numbers fit, are no taller than the room, and as many as fit.

import assert from "node:assert/strict";
import { test } from "node:test";

import { short } from "../../lnviz/web/stage/model.js";
import {
  around, cellLines, cellWidth, EM, FONT, fontFor, GAP, headEvery, lowCell, PAD, placesFor, plan, rowsFit, STRIPE,
  textEms, WIDE,
} from "../../lnviz/web/stage/view/fit.js";

const WIDTHS = Array.from({ length: 2301 }, (_, k) => 300 + k); // every px, 300 to 2,600
const MODES = [false, true]; // a screen, lecture mode
const C = 12; // the stage's window (lnviz/labs/explorer/stage.py COLS)

// A text's width in ems, character by character, as the canvas measures the stage's font (fit.js EM).
const ems = (text) => [...text].reduce((n, ch) => n + ({ "−": EM.minus, ".": EM.point }[ch] ?? EM.digit), 0);

// The grid's width for a plan: the row heads, the drawn columns (x, and LN's output when wide), LN's μ and σ,
// the gaps beside them, and the 2 px between every two tracks (the columns not drawn are 0 px tracks).
function gridWidth(p) {
  const blocks = p.wide ? 2 : 1;
  const tracks = p.wide ? 2 * C + 5 : C + 4;
  return p.hw + blocks * p.shown * p.cw + 2 * p.sw + blocks * GAP + 2 * (tracks - 1);
}

test("the widest number a cell writes below 100 is textEms wide, for either decimals", () => {
  for (const present of MODES) {
    const places = placesFor(present);
    let widest = 0;
    for (let v = -99.4; v < 99.4; v += 0.0137) widest = Math.max(widest, ems(short(v, places)));
    assert.equal(widest, textEms(places), `places ${places}`);
  }
});

test("at every width every cell drawn has room for its number, at 12 px or more, and the grid fits", () => {
  for (const present of MODES) {
    for (const width of WIDTHS) {
      for (const digits of [1, 2, 4]) {
        const p = plan({ width, C, digits, present });
        const where = `${width} px, lecture ${present}, ${digits}-digit rows`;
        assert.ok(p.numbers, where);
        assert.ok(p.shown >= 1 && p.shown <= C, where);
        assert.ok(p.font >= (present ? FONT.lecture : FONT.min) && p.font <= (present ? FONT.lecture : FONT.max), where);
        assert.ok(p.cw >= textEms(p.places) * p.font + PAD, `${where}: a cell ${p.cw} px for ${p.font} px numbers`);
        assert.ok(p.sw - STRIPE >= textEms(p.places) * p.font + PAD, `${where}: a μ or σ ${p.sw} px`);
        assert.ok(gridWidth(p) <= width, `${where}: the grid is ${gridWidth(p)} px`);
        assert.ok(p.head >= (present ? FONT.lecture : FONT.min), where);
        assert.ok(p.hw >= (p.head / 2) * digits + 4, `${where}: a row head ${p.hw} px`);
        assert.equal(p.wide, width >= WIDE, where);
      }
    }
  }
});

test("a wider stage draws no fewer columns and no smaller numbers, within each layout", () => {
  for (const present of MODES) {
    let last = null;
    for (const width of WIDTHS) {
      const p = plan({ width, C, digits: 1, present });
      if (last && last.wide === p.wide) {
        assert.ok(p.shown >= last.shown, `${width} px: ${p.shown} columns after ${last.shown}`);
        assert.ok(p.font >= last.font, `${width} px: ${p.font} px after ${last.font}`);
      }
      last = p;
    }
  }
});

test("a larger font only where every column fits with it", () => {
  for (const present of MODES) {
    for (const width of WIDTHS) {
      const p = plan({ width, C, digits: 1, present });
      if (p.font > FONT.min && !present) assert.equal(p.shown, C, `${width} px`);
    }
  }
});

test("the stages people have: every column of the 8 × 12 window on a laptop and on a projector", () => {
  // The stage's width at each screen (the main column, Streamlit's padding taken off), measured in Chromium.
  const laptops = { "1366 × 768": 906, "1440 × 900": 980, "1536 × 864": 1076, "1920 × 1080": 1460 };
  for (const [screen, width] of Object.entries(laptops)) {
    const p = plan({ width, C, digits: 1, present: false });
    assert.equal(p.shown, C, screen);
    assert.ok(p.wide, screen);
  }
  const projector = plan({ width: 1200, C, digits: 1, present: true }); // 1280 × 720, the sidebar closed
  assert.equal(projector.shown, C);
  assert.equal(projector.font, 20);
  // A phone: one norm, and more than half of the window's columns with their numbers.
  const phone = plan({ width: 358, C, digits: 1, present: false });
  assert.ok(!phone.wide && phone.shown > C / 2 && phone.shown < C, String(phone.shown));
});

test("a cell shortened to fit the screen keeps a font of 12 px at least, 20 in lecture mode", () => {
  for (const present of MODES) {
    const p = plan({ width: 1460, C, digits: 1, present });
    for (let ch = lowCell(present); ch <= 44; ch++) {
      const f = fontFor(p, ch);
      assert.ok(f >= (present ? 20 : 12) && f <= p.font, `${ch} px cells: ${f} px`);
      assert.ok(f + 3 <= ch, `${ch} px cells: ${f} px under BN's 3 px stripe`);
    }
  }
  assert.equal(fontFor(plan({ width: 1460, C, digits: 1, present: false }), 44), FONT.max);
});

test("the rows or columns drawn hold the one kept in view, and stay put while it is among them", () => {
  for (const n of [8, C]) {
    for (let shown = 1; shown <= n; shown++) {
      for (let j = 0; j < n; j++) {
        const first = around(j, shown, n);
        assert.ok(first >= 0 && first + shown <= n && j >= first && j < first + shown, `${shown} of ${n}, ${j} kept`);
        for (let k = first; k < first + shown; k++) assert.equal(around(k, shown, n, first), first);
      }
    }
  }
  assert.equal(around(11, 6, C, 0), 6); // out of the window: the window moves to it, at the end
  assert.equal(around(6, 6, C, 0), 4); // centred where it can be: 4 5 [6] 7 8 9
  assert.equal(around(2, 6, 4, 3), 0); // a window that no longer fits the columns: centred again
});

// A grid of `fixed` px and cellLines(shown) cells `ch` tall: its height.
const gridHeight = (fixed, shown, ch, bn) => fixed + cellLines(shown, bn) * ch;

test("in lecture mode the rows drawn fit the room with their numbers, as many as fit; on a screen all of them", () => {
  const low = lowCell(true), tallest = 44; // a 20 px number's cell; the tallest cell measure() asks for
  for (const bn of [true, false]) {
    for (const R of [1, 2, 5, 8]) {
      for (const fixed of [60, 131, 250]) {
        let last = 0;
        for (let room = 100; room <= 1600; room++) {
          const { shown, ch } = rowsFit({ R, room, fixed, ch: tallest, low, bn });
          const where = `R ${R}, BN ${bn}, ${fixed} px fixed, room ${room} px: ${shown} rows of ${ch} px`;
          assert.ok(shown >= 1 && shown <= R && ch >= low && ch <= tallest, where);
          assert.ok(ch >= FONT.lecture + 3, where); // a 20 px number under BN's 3 px stripe
          if (gridHeight(fixed, 1, low, bn) <= room) assert.ok(gridHeight(fixed, shown, ch, bn) <= room, where);
          else assert.ok(shown === 1 && ch === low, where); // not one row fits: one row, the least that goes
          if (shown < R) assert.ok(gridHeight(fixed, shown + 1, low, bn) > room, `${where}: one more fits`);
          if (shown === R && ch < tallest && ch > low) {
            assert.ok(gridHeight(fixed, R, ch + 1, bn) > room, `${where}: taller fits`);
          }
          assert.ok(shown >= last, `${where}: fewer rows than in less room`);
          last = shown;
          const screen = rowsFit({ R, least: R, room, fixed, ch: tallest, low: lowCell(false), bn });
          assert.equal(screen.shown, R, where); // the page scrolls
        }
      }
    }
  }
});

test("fewer rows only where all of them don't fit at the shortest cells: until then, shorter cells", () => {
  const low = lowCell(true);
  // 8 rows, BN's μ and σ: 18 lines. At 23 px cells they take 414 px.
  assert.deepEqual(rowsFit({ R: 8, room: 150 + 18 * 30, fixed: 150, ch: 44, low, bn: true }), { shown: 8, ch: 30 });
  assert.deepEqual(rowsFit({ R: 8, room: 150 + 414, fixed: 150, ch: 44, low, bn: true }), { shown: 8, ch: low });
  assert.deepEqual(rowsFit({ R: 8, room: 150 + 413, fixed: 150, ch: 44, low, bn: true }), { shown: 7, ch: 25 });
});

test("the column heads label every column that has room for its number, else every k-th", () => {
  for (const font of [12, 13, 14, 20]) {
    for (const digits of [1, 2, 3, 4]) {
      for (let cw = cellWidth(FONT.min, 2); cw <= 64; cw++) {
        const every = headEvery(font, digits, cw);
        assert.ok(every * (cw + 2) >= (font / 2) * digits + 4, `${font} px, ${digits} digits, ${cw} px`);
        assert.ok(every === 1 || (every - 1) * (cw + 2) < (font / 2) * digits + 4);
      }
    }
  }
});
