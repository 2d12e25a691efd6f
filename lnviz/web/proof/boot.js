// A first visit's proof of work (server/proved.py): the page's HTML imports this before Streamlit's own script, so
// that the WebSocket Streamlit opens carries the cookie the proof earns. No click, nothing shown.

import { payload, solve } from "./solve.js";

const TRIES = 3; // a 409 says the price rose while this browser solved: it asks for a new challenge

// Ask `api` for a challenge, solve it and send it back; whether the server set the proof's cookie.
export async function prove(api, fetcher = fetch) {
  for (let i = 0; i < TRIES; i++) {
    const asked = await fetcher(api, { cache: "no-store", credentials: "same-origin" });
    if (!asked.ok) return false;
    const challenge = await asked.json();
    const number = solve(challenge);
    if (number === null) return false;
    const sent = await fetcher(api, {
      method: "POST",
      body: payload(challenge, number),
      credentials: "same-origin",
      headers: { "Content-Type": "text/plain" },
    });
    if (sent.ok) return true;
    if (sent.status !== 409) return false;
  }
  return false;
}
