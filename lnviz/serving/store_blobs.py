"""The shared store's blobs: grids shared by a link, within one byte cap for all of them, counted on write.

Own-data shares once filled Redis (issue 30, attack 1: four sessions without cookies stored 30 grids of 8 MiB in
7 s), and Redis then evicted a class's room and votes. So the store itself holds at most ``shared_grid_bytes`` of
blobs at once, whoever stored them: a blob that would take the total past it is refused (:meth:`put_blob` returns
False) and nothing held is dropped for it; room is made only by blobs expiring. The cap is a field of the store's
:class:`lnviz.serving.store.Caps` (``Limits.shared_grid_bytes``), well under Redis's ``maxmemory``
(deploy/k8s/redis.yaml), so blobs alone never fill Redis, and that Redis evicts nothing (``noeviction``): a room or
a vote is never dropped to make room.

Both backends are mixins of the store's classes (:class:`lnviz.serving.store.MemoryStore` and ``RedisStore``),
which give them their data and lock, or their Redis connection and key prefix.

In Redis, beside each ``blob:{key}``, the count is three keys, changed only by one Lua script at a time:
``blobs:at`` (a sorted set: each blob's key, scored by when it expires, in Redis's own clock, ``TIME``),
``blobs:size`` (a hash: key -> bytes) and ``blobs:bytes`` (their sum). A write first forgets what has expired.
Each of them expires ``blob_ttl_s`` after the last write or renewal, so they outlive every blob they count and go
when the blobs have.
"""

from __future__ import annotations

import functools

# Forget the blobs whose time has passed, then store ARGV[2] under KEYS[1] if the total stays within the cap.
# KEYS: the blob, blobs:at, blobs:size, blobs:bytes. ARGV: the blob's name in them, its bytes, ttl, cap.
_PUT_LUA = """
local now = tonumber(redis.call('TIME')[1])
local ttl, cap = tonumber(ARGV[3]), tonumber(ARGV[4])
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1000)) do
  redis.call('DECRBY', KEYS[4], tonumber(redis.call('HGET', KEYS[3], gone) or '0'))
  redis.call('HDEL', KEYS[3], gone)
  redis.call('ZREM', KEYS[2], gone)
end
local size = string.len(ARGV[2])
local held = 0
if redis.call('EXISTS', KEYS[1]) == 1 then held = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0') end
if tonumber(redis.call('GET', KEYS[4]) or '0') - held + size > cap then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], size)
redis.call('INCRBY', KEYS[4], size - held)
for i = 2, 4 do redis.call('EXPIRE', KEYS[i], ttl) end
return 1
"""
# Another ttl for a blob that is there, and for its count. KEYS: as above. ARGV: the blob's name, ttl.
_RENEW_LUA = """
if redis.call('EXPIRE', KEYS[1], ARGV[2]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], 'XX', tonumber(redis.call('TIME')[1]) + tonumber(ARGV[2]), ARGV[1])
for i = 2, 4 do redis.call('EXPIRE', KEYS[i], ARGV[2]) end
return 1
"""


class MemoryBlobs:
    """Blobs in :class:`lnviz.serving.store.MemoryStore`'s dict, under its lock, expiring by its clock."""

    def blob_bytes(self) -> int:
        """The bytes of every blob held now, as the cap counts them."""
        with self._lock:
            return self._blob_bytes()

    def _blob_bytes(self) -> int:
        now = self._clock()
        return sum(len(v) for k, (at, v) in self._data.items() if k.startswith("blob:") and at > now)

    def put_blob(self, key: str, data: bytes) -> bool:
        with self._lock:
            held = self._get(f"blob:{key}")
            held_bytes = len(held) if isinstance(held, bytes) else 0
            if self._blob_bytes() - held_bytes + len(data) > self.caps.shared_grid_bytes:
                return False
            self._set(f"blob:{key}", bytes(data), self.caps.blob_ttl_s)
            return True

    def renew_blob(self, key: str) -> bool:
        with self._lock:
            found = self._get(f"blob:{key}")
            if found is not None:
                self._set(f"blob:{key}", found, self.caps.blob_ttl_s)
            return found is not None

    def get_blob(self, key: str) -> bytes | None:
        with self._lock:
            found = self._get(f"blob:{key}")
            return found if isinstance(found, bytes) else None


class RedisBlobs:
    """Blobs in ``RedisStore``'s Redis, each write one script (:data:`_PUT_LUA`, :data:`_RENEW_LUA`)."""

    @functools.cached_property
    def _blob_scripts(self) -> tuple[object, object]:
        return self._redis.register_script(_PUT_LUA), self._redis.register_script(_RENEW_LUA)

    def _blob_keys(self, key: str) -> list[str]:
        return [f"{self._p}blob:{key}", f"{self._p}blobs:at", f"{self._p}blobs:size", f"{self._p}blobs:bytes"]

    def blob_bytes(self) -> int:
        """The bytes of the blobs counted now (those past their time are forgotten on the next write)."""
        return int(self._call(lambda: self._redis.get(f"{self._p}blobs:bytes")) or 0)

    def put_blob(self, key: str, data: bytes) -> bool:
        put, _ = self._blob_scripts
        args = [key, data, self.caps.blob_ttl_s, self.caps.shared_grid_bytes]
        return bool(self._call(lambda: put(keys=self._blob_keys(key), args=args)))

    def renew_blob(self, key: str) -> bool:
        _, renew = self._blob_scripts
        args = [key, self.caps.blob_ttl_s]
        return bool(self._call(lambda: renew(keys=self._blob_keys(key), args=args)))

    def get_blob(self, key: str) -> bytes | None:
        found = self._call(lambda: self._redis.get(f"{self._p}blob:{key}"))
        return found if isinstance(found, bytes) else None
