"""The shared store's blobs: grids shared by a link, within one byte cap for all of them, shared fairly.

Own-data shares once filled Redis (issue 30, attack 1: four sessions without cookies stored 30 grids of 8 MiB in
7 s), and Redis then evicted a class's room and votes. So the store itself holds at most ``shared_grid_bytes`` of
blobs at once (``Limits.shared_grid_bytes``, of the store's :class:`~server.limits.Limits`), well under Redis's
``maxmemory`` (deploy/k8s/redis.yaml), and that Redis evicts nothing (``noeviction``): a room or a vote is never
dropped to make room for a grid.

First come, first served, six proved sessions then filled those 96 MiB in 6 s, for a day, and every later share
was refused (issue 47, attack 6). Now the cap is shared as the server's uploads are
(:func:`server.upload_share.make_room`), max-min fairly between addresses, and within an address between
its clients (browsers): a blob that does not fit makes room by dropping the oldest blob of the largest holder,
but only while that holder holds more than the newcomer will once its blob is in. A newcomer is refused only if it
would be the largest holder itself; a client's grids past its share go first, and an honest share succeeds while
a script fills the cap. A blob dropped so is a link that shows "not in the link" (the page says so), as after a day.

Both backends are mixins of the store's classes (:class:`server.store.MemoryStore` and ``RedisStore``),
which give them their data and lock, or their Redis connection and key prefix.

In Redis, beside each ``blob:{key}``, the count is kept by one Lua script at a time, in keys that expire
``blob_ttl_s`` after the last write or renewal (so they outlive every blob they count): ``blobs:at`` (a sorted
set: each blob's key, scored by when it expires, in Redis's own clock, ``TIME``), ``blobs:size`` (key -> bytes),
``blobs:bytes`` (their sum), ``blobs:owner`` (key -> its client and address), ``blobs:client`` (client ->
bytes), ``blobs:address`` (address -> bytes) and ``blobs:home`` (client -> the address of its latest blob). A write first forgets what has
expired.
"""

from __future__ import annotations

import functools

from server.upload_share import Held, make_room

# Forget the blobs whose time has passed; store ARGV[2] under KEYS[1] for client ARGV[5] of address ARGV[6],
# dropping the oldest blobs of the largest holders while they hold more than the newcomer will (make_room's rule);
# 0 when that can't make room. KEYS: the blob, then blobs: at, size, bytes, owner, client, address, home.
# ARGV: the blob's name in them, its bytes, ttl, cap, client, address.
_PUT_LUA = """
local now = tonumber(redis.call('TIME')[1])
local ttl, cap, me, here = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], ARGV[6]
local function add(hash, field, by)
  if redis.call('HINCRBY', hash, field, by) <= 0 then redis.call('HDEL', hash, field) end
end
local function forget(name)
  local size = tonumber(redis.call('HGET', KEYS[3], name) or '0')
  local owner = redis.call('HGET', KEYS[5], name)
  redis.call('DECRBY', KEYS[4], size)
  if owner then
    local cut = string.find(owner, '\\n', 1, true)
    local client = string.sub(owner, 1, cut - 1)
    add(KEYS[6], client, -size)
    add(KEYS[7], string.sub(owner, cut + 1), -size)
    if not redis.call('HGET', KEYS[6], client) then redis.call('HDEL', KEYS[8], client) end
  end
  redis.call('HDEL', KEYS[3], name)
  redis.call('HDEL', KEYS[5], name)
  redis.call('ZREM', KEYS[2], name)
  redis.call('DEL', string.sub(KEYS[1], 1, -1 - string.len(ARGV[1])) .. name)
end
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1000)) do forget(gone) end
if redis.call('EXISTS', KEYS[1]) == 1 then forget(ARGV[1]) end
local size = string.len(ARGV[2])
local total = tonumber(redis.call('GET', KEYS[4]) or '0')
while total + size > cap do
  local mine_c = tonumber(redis.call('HGET', KEYS[6], me) or '0') + size
  local mine_a = tonumber(redis.call('HGET', KEYS[7], here) or '0') + size
  local victim, best_a, best_c = nil, -1, -1
  local held = redis.call('HGETALL', KEYS[6])
  for i = 1, #held, 2 do
    local c, bytes = held[i], tonumber(held[i + 1])
    local home = redis.call('HGET', KEYS[8], c) or ''
    local of_a = tonumber(redis.call('HGET', KEYS[7], home) or '0')
    local fair = c ~= me and ((home == here and bytes > mine_c) or (home ~= here and of_a > mine_a))
    if fair and (of_a > best_a or (of_a == best_a and bytes > best_c)) then victim, best_a, best_c = c, of_a, bytes end
  end
  if not victim then return 0 end
  local oldest = nil
  local start = 0
  while not oldest do
    local page = redis.call('ZRANGE', KEYS[2], start, start + 255)
    if #page == 0 then return 0 end
    for _, name in ipairs(page) do
      local owner = redis.call('HGET', KEYS[5], name) or ''
      if string.sub(owner, 1, string.len(victim) + 1) == victim .. '\\n' then oldest = name break end
    end
    start = start + 256
  end
  total = total - tonumber(redis.call('HGET', KEYS[3], oldest) or '0')
  forget(oldest)
end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], size)
redis.call('INCRBY', KEYS[4], size)
redis.call('HSET', KEYS[5], ARGV[1], me .. '\\n' .. here)
redis.call('HINCRBY', KEYS[6], me, size)
redis.call('HINCRBY', KEYS[7], here, size)
redis.call('HSET', KEYS[8], me, here)
for i = 2, 8 do redis.call('EXPIRE', KEYS[i], ttl) end
return 1
"""
# Another ttl for a blob that is there, and for its count. KEYS: as above. ARGV: the blob's name, ttl.
_RENEW_LUA = """
if redis.call('EXPIRE', KEYS[1], ARGV[2]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], 'XX', tonumber(redis.call('TIME')[1]) + tonumber(ARGV[2]), ARGV[1])
for i = 2, 8 do redis.call('EXPIRE', KEYS[i], ARGV[2]) end
return 1
"""


class MemoryBlobs:
    """Blobs in :class:`server.store.MemoryStore`'s dict, under its lock, expiring by its clock: each
    ``blob:{key}`` beside its ``owner:{key}``, (client, address)."""

    def blob_bytes(self) -> int:
        """The bytes of every blob held now, as the cap counts them."""
        with self._lock:
            return sum(f.nbytes for f in self._blobs()[0])

    def _blobs(self) -> tuple[list[Held], dict[str, str]]:
        """Every blob held now, the one expiring first first (the least recently stored or renewed), and the
        address of each client holding one."""
        now = self._clock()
        held = sorted((at, k.removeprefix("blob:"), v) for k, (at, v) in self._data.items() if k.startswith("blob:"))
        files, addresses = [], {}
        for at, key, data in held:
            if at > now:
                client, address = self._data[f"owner:{key}"][1]
                files.append(Held(client, key, len(data)))
                addresses[client] = address
        return files, addresses

    def put_blob(self, key: str, data: bytes, client: str = "", address: str = "") -> bool:
        with self._lock:
            self._data.pop(f"blob:{key}", None)  # stored again: counted afresh, for its new client
            files, addresses = self._blobs()
            addresses.setdefault(client, address)
            total = sum(f.nbytes for f in files)
            gone = make_room(files, addresses, client, len(data), self.limits.shared_grid_bytes)
            if total - sum(f.nbytes for f in gone) + len(data) > self.limits.shared_grid_bytes:
                return False
            for f in gone:
                del self._data[f"blob:{f.file_id}"], self._data[f"owner:{f.file_id}"]
            self._set(f"blob:{key}", bytes(data), self.limits.blob_ttl_s)
            self._set(f"owner:{key}", (client, address), self.limits.blob_ttl_s)
            return True

    def renew_blob(self, key: str) -> bool:
        with self._lock:
            found, owner = self._get(f"blob:{key}"), self._get(f"owner:{key}")
            if found is not None:
                self._set(f"blob:{key}", found, self.limits.blob_ttl_s)
                self._set(f"owner:{key}", owner, self.limits.blob_ttl_s)
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
        counts = ("at", "size", "bytes", "owner", "client", "address", "home")
        return [f"{self._p}blob:{key}", *(f"{self._p}blobs:{name}" for name in counts)]

    def blob_bytes(self) -> int:
        """The bytes of the blobs counted now (those past their time are forgotten on the next write)."""
        return int(self._call(lambda: self._redis.get(f"{self._p}blobs:bytes")) or 0)

    def put_blob(self, key: str, data: bytes, client: str = "", address: str = "") -> bool:
        put, _ = self._blob_scripts
        args = [key, data, self.limits.blob_ttl_s, self.limits.shared_grid_bytes, client, address]
        return bool(self._call(lambda: put(keys=self._blob_keys(key), args=args)))

    def renew_blob(self, key: str) -> bool:
        _, renew = self._blob_scripts
        args = [key, self.limits.blob_ttl_s]
        return bool(self._call(lambda: renew(keys=self._blob_keys(key), args=args)))

    def get_blob(self, key: str) -> bytes | None:
        found = self._call(lambda: self._redis.get(f"{self._p}blob:{key}"))
        return found if isinstance(found, bytes) else None
