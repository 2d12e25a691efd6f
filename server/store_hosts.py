"""The shared store's presenter browsers: a room taken to another browser with a one-time take code (issue 49).

A lecturer's second device (a phone beside the projector, the podium's PC) presents the same room: its own view,
with the share of the class that is right and the buttons. Taking the room there is a deliberate act: the
presenter makes a *take code* (:func:`server.poll.hand_over`), which the store keeps only as its SHA-256,
for ``take_s`` (a field of the store's :class:`~server.limits.Limits`), one live code per room (a new one ends the
last); a browser that uses it (:func:`server.poll.take_over`) gets a secret of its own, whose SHA-256 joins the
room's ``hosts``, at most ``max_hosts`` of them, and the code is gone. The browser that started the room may sign the
others out. Both browsers then act on the room through the store, at the version each drew, as two tabs do.

Both backends are mixins of the store's classes (:class:`server.store.MemoryStore` and ``RedisStore``),
which give them their data and lock, or their Redis connection and key prefix. In Redis: ``take:{sha}`` (the take
code's hash → its room's code) and ``taking:{code}`` (the room's live take code's hash), each expiring with the
code; the hosts are the room hash's ``hosts`` field, which only these scripts write (``RedisStore.act`` leaves it
as it is, so a press and a take at once lose neither).
"""

from __future__ import annotations

import functools
from dataclasses import replace

from server.poll import TAKEN, Room, first_presenter, presenter_of, sha

# A take code for room KEYS[1], if its presenter (the first, or a further one) makes it and it is open; an earlier
# live code of the room's is deleted. KEYS: room, take:{new}, taking:{code}. ARGV: the maker's secret's hash, the
# new code's hash, the room's code, the ttl, the prefix of take:{…} keys (the earlier code's key, named by value).
_HAND_LUA = """
local r = redis.call('HMGET', KEYS[1], 'closed', 'secret_sha', 'hosts')
if r[1] ~= '0' then return 0 end
if r[2] ~= ARGV[1] and not string.find(',' .. (r[3] or '') .. ',', ',' .. ARGV[1] .. ',', 1, true) then return 0 end
local old = redis.call('GET', KEYS[3])
if old then redis.call('DEL', ARGV[5] .. old) end
redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[4])
redis.call('SET', KEYS[3], ARGV[2], 'EX', ARGV[4])
return 1
"""
# A take code used: the new browser's secret's hash joins the room's hosts, and the code is gone; or why not.
# KEYS: take:{sha}. ARGV: the new secret's hash, max hosts, the room's idle ttl, the store's prefix.
_TAKE_LUA = """
local code = redis.call('GET', KEYS[1])
if not code then return {'used'} end
local room = ARGV[4] .. 'room:' .. code
local r = redis.call('HMGET', room, 'closed', 'hosts')
if r[1] ~= '0' then return {'unknown'} end
local hosts = r[2] or ''
local n = 0
for _ in string.gmatch(hosts, '[^,]+') do n = n + 1 end
if n >= tonumber(ARGV[2]) then return {'many'} end
redis.call('HSET', room, 'hosts', hosts == '' and ARGV[1] or hosts .. ',' .. ARGV[1])
redis.call('EXPIRE', room, ARGV[3])
redis.call('DEL', KEYS[1], ARGV[4] .. 'taking:' .. code)
return {'taken', code}
"""
# The further presenters signed out, by the room's first presenter; its live take code too.
# KEYS: room, taking:{code}. ARGV: the first presenter's secret's hash, the prefix of take:{…} keys.
_SIGN_OUT_LUA = """
if redis.call('HGET', KEYS[1], 'secret_sha') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'hosts', '')
local old = redis.call('GET', KEYS[2])
if old then redis.call('DEL', ARGV[2] .. old, KEYS[2]) end
return 1
"""


class MemoryHosts:
    """Take codes in :class:`server.store.MemoryStore`'s dict, under its lock: ``take:{sha}`` → the room's
    code, ``taking:{code}`` → its live code's sha."""

    def hand_over(self, code: str, secret: str, take_sha: str) -> bool:
        with self._lock:
            room = self._get(f"room:{code}")
            if not isinstance(room, Room) or room.closed or not presenter_of(room, secret):
                return False
            self._forget_take(code)
            self._set(f"take:{take_sha}", code, self.limits.take_s)
            self._set(f"taking:{code}", take_sha, self.limits.take_s)
            return True

    def take_over(self, take_sha: str, secret_sha: str) -> tuple[str, str | None]:
        with self._lock:
            code = self._get(f"take:{take_sha}")
            if not isinstance(code, str):
                return "used", None
            room = self._get(f"room:{code}")
            if not isinstance(room, Room) or room.closed:
                return "unknown", None
            if len(room.hosts) >= self.limits.max_hosts:
                return "many", None
            self._forget_take(code)
            self._set(f"room:{code}", replace(room, hosts=(*room.hosts, secret_sha)), self.limits.idle_s)
            return TAKEN, code

    def sign_out(self, code: str, secret: str) -> bool:
        with self._lock:
            room = self._get(f"room:{code}")
            if not isinstance(room, Room) or not first_presenter(room, secret):
                return False
            self._forget_take(code)
            self._data[f"room:{code}"] = (self._data[f"room:{code}"][0], replace(room, hosts=()))  # its expiry kept
            return True

    def _forget_take(self, code: str) -> None:
        live = self._get(f"taking:{code}")
        if isinstance(live, str):
            self._data.pop(f"take:{live}", None)
        self._data.pop(f"taking:{code}", None)


class RedisHosts:
    """Take codes in ``RedisStore``'s Redis, each write one script."""

    @functools.cached_property
    def _host_scripts(self) -> tuple[object, object, object]:
        return tuple(self._redis.register_script(lua) for lua in (_HAND_LUA, _TAKE_LUA, _SIGN_OUT_LUA))

    def hand_over(self, code: str, secret: str, take_sha: str) -> bool:
        hand, _, _ = self._host_scripts
        keys = [f"{self._p}room:{code}", f"{self._p}take:{take_sha}", f"{self._p}taking:{code}"]
        args = [sha(secret), take_sha, code, self.limits.take_s, f"{self._p}take:"]
        return bool(self._call(lambda: hand(keys=keys, args=args)))

    def take_over(self, take_sha: str, secret_sha: str) -> tuple[str, str | None]:
        _, take, _ = self._host_scripts
        args = [secret_sha, self.limits.max_hosts, self.limits.idle_s, self._p]
        found = [part.decode() for part in self._call(lambda: take(keys=[f"{self._p}take:{take_sha}"], args=args))]
        return found[0], (found[1] if len(found) > 1 else None)

    def sign_out(self, code: str, secret: str) -> bool:
        _, _, out = self._host_scripts
        keys = [f"{self._p}room:{code}", f"{self._p}taking:{code}"]
        return bool(self._call(lambda: out(keys=keys, args=[sha(secret), f"{self._p}take:"])))
