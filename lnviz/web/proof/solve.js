// ALTCHA's proof of work (its challenge format v1): find the number n in 0..maxnumber whose SHA-256 of
// `salt + n`, in hex, is the challenge. The server makes the challenge and checks the answer with PyPI's
// `altcha` (server/proof.py); this file only searches, and touches no DOM (node --test runs it).
//
// SHA-256 is written out here rather than asked of Web Crypto: crypto.subtle exists only on https or
// localhost (a class on a LAN over http has none), and its one promise per hash cost 90-180 µs in Chromium
// here, against about 1 µs for this loop, so a phone would pay a hundred times what a script pays per proof.

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
const W = new Uint32Array(64);
const BLOCK = new Uint32Array(32); // up to two blocks: a salt and a number are short
const OUT = new Uint32Array(8);

// SHA-256 of an ASCII string of at most 119 characters (a salt and a number), into eight 32-bit words.
export function sha256(text, out = OUT) {
  const length = text.length;
  const blocks = length + 9 > 64 ? 2 : 1;
  BLOCK.fill(0);
  for (let i = 0; i < length; i++) BLOCK[i >> 2] |= text.charCodeAt(i) << (24 - (i & 3) * 8);
  BLOCK[length >> 2] |= 0x80 << (24 - (length & 3) * 8);
  BLOCK[blocks * 16 - 1] = length * 8;
  let h0 = 0x6a09e667, h1 = 0xbb67ae85, h2 = 0x3c6ef372, h3 = 0xa54ff53a; // prettier-ignore
  let h4 = 0x510e527f, h5 = 0x9b05688c, h6 = 0x1f83d9ab, h7 = 0x5be0cd19; // prettier-ignore
  for (let b = 0; b < blocks; b++) {
    for (let t = 0; t < 16; t++) W[t] = BLOCK[b * 16 + t];
    for (let t = 16; t < 64; t++) {
      const x = W[t - 15];
      const y = W[t - 2];
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[t] = (W[t - 16] + s0 + W[t - 7] + s1) | 0;
    }
    let a = h0, c1 = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7; // prettier-ignore
    for (let t = 0; t < 64; t++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[t] + W[t]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & c1) ^ (a & c) ^ (c1 & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = c1;
      c1 = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + c1) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  out[0] = h0;
  out[1] = h1;
  out[2] = h2;
  out[3] = h3;
  out[4] = h4;
  out[5] = h5;
  out[6] = h6;
  out[7] = h7;
  return out;
}

export const hex = (words) => Array.from(words, (x) => (x >>> 0).toString(16).padStart(8, "0")).join("");

// The number that solves `challenge` ({algorithm, challenge, maxnumber, salt, signature}, as the server gave
// it), or null if none in 0..maxnumber does.
export function solve(challenge) {
  const { salt, maxnumber } = challenge;
  const target = String(challenge.challenge);
  const first = parseInt(target.slice(0, 8), 16) >>> 0; // most numbers fail on the first word: no hex string
  for (let n = 0; n <= maxnumber; n++) {
    const words = sha256(salt + n);
    if (words[0] >>> 0 === first && hex(words) === target) return n;
  }
  return null;
}

// What the server is sent back: ALTCHA's payload, the base64 of its JSON.
export const payload = (challenge, number) =>
  btoa(
    JSON.stringify({
      algorithm: challenge.algorithm,
      challenge: challenge.challenge,
      number,
      salt: challenge.salt,
      signature: challenge.signature,
    }),
  );
