// The browser's side of the proof of work (lnviz/web/proof/): SHA-256 as node:crypto computes it, the number
// that solves an ALTCHA challenge made as the server makes one, and the boot's exchange with the server.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";

import { prove } from "../../lnviz/web/proof/boot.js";
import { hex, payload, sha256, solve } from "../../lnviz/web/proof/solve.js";

const digest = (text) => createHash("sha256").update(text).digest("hex");

// As altcha.create_challenge_v1 makes one: a salt with its parameters and a closing "&", the hash of salt + n.
const challenge = (n, maxnumber = 5000) => {
  const salt = `1d2c3b4a5f6e7d8c9b0a1f2e?expires=1800000120&work=${maxnumber}&`;
  return { algorithm: "SHA-256", challenge: digest(salt + n), maxnumber, salt, signature: "s" };
};

test("sha256 agrees with node:crypto on every length a salt and a number can have, across the block edge", () => {
  for (let length = 0; length <= 119; length++) {
    const text = Array.from({ length }, (_, i) => "a1?&=_-z"[(i * 7 + length) % 8]).join("");
    assert.equal(hex(sha256(text)), digest(text), `length ${length}`);
  }
});

test("solve finds the number the challenge hides, and says none when it is past maxnumber", () => {
  for (const n of [0, 1, 17, 4999, 5000]) assert.equal(solve(challenge(n)), n);
  assert.equal(solve({ ...challenge(5001), maxnumber: 5000 }), null);
});

test("the payload is ALTCHA's: base64 of the challenge's fields and the number", () => {
  const c = challenge(42);
  const sent = JSON.parse(Buffer.from(payload(c, 42), "base64").toString());
  assert.deepEqual(sent, { algorithm: "SHA-256", challenge: c.challenge, number: 42, salt: c.salt, signature: "s" });
});

const answer = (status, body) => ({ ok: status >= 200 && status < 300, status, json: async () => body });

test("prove asks, solves and sends back; asks again on 409 (the price rose) and gives up on a refusal", async () => {
  const calls = [];
  const server = (replies) => async (url, options = {}) => {
    calls.push([options.method || "GET", options.body]);
    return replies.shift();
  };
  assert.equal(await prove("/api/proof", server([answer(200, challenge(7)), answer(204)])), true);
  assert.equal(JSON.parse(Buffer.from(calls[1][1], "base64").toString()).number, 7);
  const rose = [answer(200, challenge(3)), answer(409), answer(200, challenge(9)), answer(204)];
  assert.equal(await prove("/api/proof", server(rose)), true);
  assert.equal(await prove("/api/proof", server([answer(200, challenge(3)), answer(403)])), false);
  assert.equal(await prove("/api/proof", server([answer(503)])), false);
});
