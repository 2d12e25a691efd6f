// The class element's constructed answers (lnviz/web/class/construct.js) on the stand-in DOM: a cells question's
// picker keeps each column at 44 px or more (the grid scrolls sideways where they don't fit: class.css), a tap
// toggles a cell and Send sends the mask; the drag slider steps by the question's step (Question.step) and sends
// nothing until moved.

import assert from "node:assert/strict";
import { test } from "node:test";

import { fire, installDom } from "./fake_dom.mjs";

installDom(360);
const { cellPicker, slider } = await import("../../lnviz/web/class/construct.js");

const grid = {
  rows: 6, cols: 8, marked: 21, axes: ["token", "feature"],
  row_names: ["[CLS]", "the", "cat", "sat", ".", "[SEP]"], col_names: ["0", "1", "2", "3", "4", "5", "6", "7"],
};
const voter = () => {
  const sent = [];
  return { sent, vote: (s, answer) => sent.push(answer) };
};

test("a cells question's picker: 44 px columns or more, row names first, a tap toggles, Send sends the mask", () => {
  const { sent, vote } = voter();
  const s = {};
  const form = cellPicker(s, { q: { kind: "cells", grid }, own: null }, vote);
  const box = form.querySelector(".grid");
  assert.ok(box.classList.contains("picker")); // the class that scrolls it sideways under its row names
  assert.equal(box.style.gridTemplateColumns, "max-content repeat(8, minmax(44px, 1fr))");
  const cells = form.querySelectorAll("button.cell");
  assert.equal(cells.length, 48);
  assert.equal(cells[21].textContent, "★");
  fire(cells[2], "click");
  fire(cells[5], "click");
  fire(cells[2], "click"); // tapped again: off
  assert.deepEqual(
    cells.map((c) => c.getAttribute("aria-pressed")).flatMap((p, k) => (p === "true" ? [k] : [])),
    [5],
  );
  fire(form, "submit");
  assert.deepEqual(sent, ["000000000020"]); // bit 5, 12 hex digits for 48 cells
});

test("a drag question's slider steps by the question's step and sends nothing until moved", () => {
  const { sent, vote } = voter();
  const q = { kind: "number", drag: true, lo: 0, hi: 40, step: 0.5, decimals: 1, span: "from 0 to 40" };
  const form = slider({}, { q, key: "d", own: null }, vote);
  const input = form.querySelector("input");
  assert.deepEqual([input.min, input.max, input.step, input.value], ["0", "40", "0.5", "20"]);
  fire(form, "submit");
  assert.deepEqual(sent, []); // Send is off until the slider moves
  input.value = "4";
  fire(input, "input");
  fire(form, "submit");
  assert.deepEqual(sent, ["4.0"]);
});
