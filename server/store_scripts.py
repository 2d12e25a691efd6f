"""The Redis store's writes, each one Lua script run atomically in Redis (:class:`server.store.RedisStore`):
a room created, a vote, a presenter's action, a concept check's answer. Each makes the same checks as :class:`server.store.MemoryStore`
does under its lock; tests/test_store.py runs both backends. Times are Redis's own clock (``TIME``), so replicas
with clocks apart agree.
"""

# A new room, unless the opener's counters are at their limits or its code is taken. A room created counts once in
# the client's counter and, unless it is the client's first of the window, in the address's (an opener the caller
# can't name has no first). KEYS: room, the client's counter, the address's, the room's birth. ARGV: ttl, window,
# the client's limit, the address's (0: not counted, the opener is unknown), then the room's fields as pairs.
CREATE_LUA = """
local client_limit, address_limit = tonumber(ARGV[3]), tonumber(ARGV[4])
local mine = tonumber(redis.call('GET', KEYS[2]) or '0')
if client_limit > 0 and mine >= client_limit then return 'many' end
local counted = address_limit > 0 and (client_limit == 0 or mine > 0)
if counted and tonumber(redis.call('GET', KEYS[3]) or '0') >= address_limit then return 'network' end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'taken' end
for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('SET', KEYS[4], redis.call('TIME')[1], 'EX', ARGV[1])
if client_limit > 0 and redis.call('INCR', KEYS[2]) == 1 then redis.call('EXPIRE', KEYS[2], ARGV[2]) end
if counted and redis.call('INCR', KEYS[3]) == 1 then redis.call('EXPIRE', KEYS[3], ARGV[2]) end
return 'created'
"""
# The limits every answer of a voter meets in a room, whatever it answers (a poll's vote, the concept check's):
# the rate, the door, the voters of its client and of its address; a script that takes an answer begins with
# these functions. KEYS: [3] the voter's rate, [4] the client's voters, [5] the address's voters, [6] the room's
# joined voters, [7] its birth. ARGV: [1] voter, [5] idle ttl, [6] rate votes, [7] rate window, [9] voters per
# client, [10] voters per address (0: the sender is unknown), [11] the address's places more per second.
# admit(shut) returns a refusal, or nil and whether the voter takes one of the address's places; admitted(further)
# records the voter once its answer is stored.
ADMIT_LUA = """
local function admit(shut)
  local sent = redis.call('INCR', KEYS[3])
  if sent == 1 then redis.call('EXPIRE', KEYS[3], ARGV[7]) end
  if sent > tonumber(ARGV[6]) then return 'flood' end
  local voter, now = ARGV[1], tonumber(redis.call('TIME')[1])
  if shut and not redis.call('ZSCORE', KEYS[6], voter) then return 'door' end
  local per_client, per_address = tonumber(ARGV[9]), tonumber(ARGV[10])
  local known = redis.call('SISMEMBER', KEYS[4], voter) == 1
  local mine = redis.call('SCARD', KEYS[4])
  if per_client > 0 and not known and mine >= per_client then return 'crowded' end
  local further = per_address > 0 and (per_client == 0 or mine - (known and 1 or 0) > 0)
  if further and redis.call('SISMEMBER', KEYS[5], voter) == 0 then
    local born = tonumber(redis.call('GET', KEYS[7]) or '0')
    local age = born > 0 and now - born or tonumber(ARGV[5])
    if redis.call('SCARD', KEYS[5]) >= per_address + tonumber(ARGV[11]) * age then return 'network' end
  end
  return nil, further
end
local function admitted(further)
  local voter = ARGV[1]
  redis.call('ZADD', KEYS[6], 'NX', tonumber(redis.call('TIME')[1]), voter)
  redis.call('EXPIRE', KEYS[6], ARGV[5])
  if tonumber(ARGV[9]) > 0 then
    redis.call('SADD', KEYS[4], voter)
    redis.call('EXPIRE', KEYS[4], ARGV[5])
  end
  if further then
    redis.call('SADD', KEYS[5], voter)
    redis.call('EXPIRE', KEYS[5], ARGV[5])
  end
end
"""
# The vote, atomically: the same checks as poll.refusal and MemoryStore.vote, in one script.
# KEYS: room, votes, rate, the client's voters, the address's voters, the room's joined voters, its birth. ARGV: voter,
# index, round, choice, idle ttl, rate votes, rate window, max voters, voters per client, voters per address (0: the
# sender is unknown), the address's places more per second.
VOTE_LUA = (
    ADMIT_LUA
    + """
local r = redis.call('HMGET', KEYS[1], 'index', 'round', 'phase', 'closed', 'shut')
if not r[1] then return 'unknown' end
if r[4] == '1' then return 'closed' end
if r[1] ~= ARGV[2] or r[2] ~= ARGV[3] then return 'moved' end
if r[3] ~= 'ask' then return 'revealed' end
local refused, further = admit(r[5] == '1')
if refused then return refused end
local answered = redis.call('HEXISTS', KEYS[2], ARGV[1])
if answered == 0 and redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[8]) then return 'full' end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[5])
admitted(further)
if answered == 1 then return 'changed' end
return 'counted'
"""
)
# The presenter's action, atomically: compare and set on the version the presenter's page drew (which act has
# already found the room at), so two presses of that page, or two pages at that version, move the room once.
# KEYS: room. ARGV: expected version, then the new room's fields as name, value pairs, then the ttl last.
ACT_LUA = """
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
local n = #ARGV
for i = 2, n - 1, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[1], ARGV[n])
return 1
"""
# The concept check's answer, atomically: the same checks as check.refusal and MemoryStore.check_vote, in one script.
# KEYS: room, the phase's answers ("voter/item" -> choice), rate, the client's voters, the address's voters, the
# room's joined voters, its birth, the phase's voters. ARGV: voter, phase, item, choice, idle ttl, rate votes, rate
# window, max voters, voters per client, voters per address, the address's places more per second, the steps at
# which the phase is closed (comma-separated).
CHECK_VOTE_LUA = (
    ADMIT_LUA
    + """
local r = redis.call('HMGET', KEYS[1], 'closed', 'check', 'shut')
if not r[1] then return 'unknown' end
if r[1] == '1' then return 'closed' end
local step = r[2] or ''
if step ~= ARGV[2] then
  if string.find(',' .. ARGV[12] .. ',', ',' .. step .. ',', 1, true) then return 'check-closed' end
  return 'check-not-open'
end
local refused, further = admit(r[3] == '1')
if refused then return refused end
local voter, field = ARGV[1], ARGV[1] .. '/' .. ARGV[3]
if redis.call('SISMEMBER', KEYS[8], voter) == 0 and redis.call('SCARD', KEYS[8]) >= tonumber(ARGV[8]) then
  return 'full'
end
local answered = redis.call('HEXISTS', KEYS[2], field)
redis.call('HSET', KEYS[2], field, ARGV[4])
redis.call('SADD', KEYS[8], voter)
for _, key in ipairs({KEYS[2], KEYS[8]}) do redis.call('EXPIRE', key, ARGV[5]) end
admitted(further)
if answered == 1 then return 'changed' end
return 'counted'
"""
)
