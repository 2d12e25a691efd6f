"""One real server (the session's default one, tests/conftest.py's ``app_process``): a client that fills the upload ceiling from many sessions can't keep a newcomer out."""

from __future__ import annotations

import time

from test_server_limits import held_upload_bytes, opened

from harness import aio
from harness.upload import put_file, xsrf_cookie

MIB = 2**20


async def fill_then_newcomer(base: str) -> tuple[list[int], int, int]:
    """Eight sessions PUT two 31 MiB files each and a ninth 16 MiB, filling the 512 MiB to the byte; then one
    more 31 MiB; then a newcomer PUTs 16 KiB. Their statuses, and the bytes held at the end."""
    xsrf = xsrf_cookie(base)
    attackers = [await opened(base) for _ in range(9)]
    newcomer = await opened(base)
    big, small = b"1,2\n" * (31 * MIB // 4), b"1,2\n" * 4096
    try:
        filled = [put_file(base, s.session_id, xsrf, big) for _ in range(2) for s in attackers[:8]]
        filled.append(put_file(base, attackers[8].session_id, xsrf, big[: 16 * MIB]))
        filled.append(put_file(base, attackers[8].session_id, xsrf, big))
        status = put_file(base, newcomer.session_id, xsrf, small)
        return filled, status, held_upload_bytes(base)
    finally:
        for s in [*attackers, newcomer]:
            await s.close()


def test_a_newcomers_small_file_is_taken_while_one_client_holds_the_ceiling(app_process):
    filled, status, held = aio.run(fill_then_newcomer(app_process.url))
    time.sleep(0.5)  # a server that falls over does so a moment after its last answer: real time, on the server
    assert app_process.proc.poll() is None, app_process.log_tail()
    assert filled[:17] == [204] * 17  # the ceiling, 512 MiB, is full to the byte
    # The 18th takes the place of a larger session's oldest file (all these sessions are one client, here).
    assert status == 204  # the newcomer's 16 KiB got in: the largest holder's oldest file made room
    assert held <= 512 * MIB
