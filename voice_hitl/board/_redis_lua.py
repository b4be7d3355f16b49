"""The Lua scripts that make :class:`~voice_hitl.board.RedisBoard`'s steps atomic.

Keys under the prefix ``P`` (passed as ``ARGV[1]``; it carries a hash tag,
:func:`voice_hitl._redis_target.keyspace`, so every key is in one slot of a cluster;
``KEYS[1]`` is ``P epoch``, only to route the call to that slot's master): ``P req:ID``
(hash: data, status, worker, text, detail, at, by, via; and from an operator's claim on:
claim, claim_status, claim_text, claim_by, claim_via, claim_until,
claim_taken), ``P open`` (hash id -> data of the open requests), ``P wopen:W`` (set of
worker W's open ids), ``P workers`` (set), ``P hb:W`` (a key that lives while W heartbeats),
``P epoch`` (hash: id, and lost_at once a client that knew an earlier epoch found it gone: the
server lost the board's state, see :data:`EPOCH`).
Events are published on ``P events`` (every request) and ``P events:W`` (W's requests) as the
request hash in JSON with a ``type`` of ``opened`` or ``settled``; a claim is published as
``claimed`` on ``P events:W`` only (the owner's business), an escalation as ``escalated`` (with
an ``escalation`` field: its note in JSON) on ``P events`` only (the service's business).
Times come from the server's clock (``TIME``).
"""

from __future__ import annotations

__all__ = [
    "CLAIM",
    "EPOCH",
    "ESCALATE",
    "PUBLISH",
    "REAP",
    "RELEASE",
    "RESTORE",
    "SETTLE",
    "TAKE",
]

_PRELUDE = """
local P = ARGV[1]
local function now()
  local t = redis.call('TIME')
  return string.format('%.6f', tonumber(t[1]) + tonumber(t[2]) / 1000000)
end
local function announce(kind, worker, fields)
  local obj = {type = kind}
  for i = 1, #fields, 2 do obj[fields[i]] = fields[i + 1] end
  local msg = cjson.encode(obj)
  redis.call('PUBLISH', P .. 'events', msg)
  redis.call('PUBLISH', P .. 'events:' .. worker, msg)
end
local function settle(id, key, status, text, by, via, detail, retention)
  local worker = redis.call('HGET', key, 'worker')
  redis.call('HSET', key, 'status', status, 'text', text, 'by', by, 'via', via,
             'detail', detail, 'at', now())
  redis.call('HDEL', P .. 'open', id)
  redis.call('SREM', P .. 'wopen:' .. worker, id)
  redis.call('EXPIRE', key, retention)
  local fields = redis.call('HGETALL', key)
  announce('settled', worker, fields)
  return fields
end
local function abandon_reason(worker)
  return "abandoned: worker '" .. worker .. "' stopped sending heartbeats"
end
local function claim_waits(key)
  local token = redis.call('HGET', key, 'claim')
  if not token or token == '' then return false end
  if redis.call('HGET', key, 'claim_taken') == '1' then return true end
  return tonumber(redis.call('HGET', key, 'claim_until')) > tonumber(now())
end
"""

PUBLISH = (
    _PRELUDE
    + """
-- ARGV: P, id, data, worker, revive
local id, worker = ARGV[2], ARGV[4]
local key = P .. 'req:' .. id
local status = redis.call('HGET', key, 'status')
if status == 'open' then return {'exists', unpack(redis.call('HGETALL', key))} end
if status and not (ARGV[5] == '1' and status == 'abandoned') then
  return {'settled', unpack(redis.call('HGETALL', key))}
end
redis.call('DEL', key)
redis.call('HSET', key, 'data', ARGV[3], 'status', 'open', 'worker', worker)
redis.call('HSET', P .. 'open', id, ARGV[3])
redis.call('SADD', P .. 'wopen:' .. worker, id)
redis.call('SADD', P .. 'workers', worker)
local fields = redis.call('HGETALL', key)
announce('opened', worker, fields)
return {'created', unpack(fields)}
"""
)

SETTLE = (
    _PRELUDE
    + """
-- ARGV: P, id, status, text, by, via, detail, caller worker, retention
local id = ARGV[2]
local key = P .. 'req:' .. id
local status = redis.call('HGET', key, 'status')
if not status then return {'missing'} end
if status ~= 'open' then return {'lost', unpack(redis.call('HGETALL', key))} end
local worker = redis.call('HGET', key, 'worker')
if ARGV[8] ~= worker and redis.call('EXISTS', P .. 'hb:' .. worker) == 0 then
  local fields = settle(id, key, 'abandoned', abandon_reason(worker), '', '', '', ARGV[9])
  return {'lost', unpack(fields)}
end
if ARGV[8] ~= worker and claim_waits(key) then
  return {'lost', unpack(redis.call('HGETALL', key))}
end
return {'won', unpack(settle(id, key, ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[9]))}
"""
)

REAP = (
    _PRELUDE
    + """
-- ARGV: P, retention
local out = {}
for _, worker in ipairs(redis.call('SMEMBERS', P .. 'workers')) do
  if redis.call('EXISTS', P .. 'hb:' .. worker) == 0 then
    for _, id in ipairs(redis.call('SMEMBERS', P .. 'wopen:' .. worker)) do
      local key = P .. 'req:' .. id
      if redis.call('HGET', key, 'status') == 'open' then
        settle(id, key, 'abandoned', abandon_reason(worker), '', '', '', ARGV[2])
        table.insert(out, id)
      end
    end
    redis.call('DEL', P .. 'wopen:' .. worker)
    redis.call('SREM', P .. 'workers', worker)
  end
end
return out
"""
)

CLAIM = (
    _PRELUDE
    + """
-- ARGV: P, id, status, text, by, via, token, window (seconds), retention
local id = ARGV[2]
local key = P .. 'req:' .. id
local status = redis.call('HGET', key, 'status')
if not status then return {'missing'} end
if status ~= 'open' then return {'settled', unpack(redis.call('HGETALL', key))} end
local worker = redis.call('HGET', key, 'worker')
if redis.call('EXISTS', P .. 'hb:' .. worker) == 0 then
  local fields = settle(id, key, 'abandoned', abandon_reason(worker), '', '', '', ARGV[9])
  return {'settled', unpack(fields)}
end
if claim_waits(key) then
  local outcome = 'busy'
  if redis.call('HGET', key, 'claim') == ARGV[7] then outcome = 'claimed' end
  return {outcome, unpack(redis.call('HGETALL', key))}
end
local deadline = string.format('%.6f', tonumber(now()) + tonumber(ARGV[8]))
redis.call('HSET', key, 'claim', ARGV[7], 'claim_status', ARGV[3], 'claim_text', ARGV[4],
           'claim_by', ARGV[5], 'claim_via', ARGV[6], 'claim_until', deadline, 'claim_taken', '0')
local fields = redis.call('HGETALL', key)
local obj = {type = 'claimed'}
for i = 1, #fields, 2 do obj[fields[i]] = fields[i + 1] end
redis.call('PUBLISH', P .. 'events:' .. worker, cjson.encode(obj))
return {'claimed', unpack(fields)}
"""
)

TAKE = (
    _PRELUDE
    + """
-- ARGV: P, id, token, worker
local key = P .. 'req:' .. ARGV[2]
if redis.call('HGET', key, 'status') ~= 'open' then return 0 end
if redis.call('HGET', key, 'worker') ~= ARGV[4] then return 0 end
if redis.call('HGET', key, 'claim') ~= ARGV[3] then return 0 end
if redis.call('HGET', key, 'claim_taken') == '1' then return 1 end
if tonumber(redis.call('HGET', key, 'claim_until')) <= tonumber(now()) then return 0 end
redis.call('HSET', key, 'claim_taken', '1')
return 1
"""
)

RELEASE = (
    _PRELUDE
    + """
-- ARGV: P, id, token, retention
local id = ARGV[2]
local key = P .. 'req:' .. id
local status = redis.call('HGET', key, 'status')
if not status then return {'missing'} end
if status ~= 'open' or redis.call('HGET', key, 'claim') ~= ARGV[3]
   or redis.call('HGET', key, 'claim_taken') == '1' then
  return {'kept', unpack(redis.call('HGETALL', key))}
end
redis.call('HDEL', key, 'claim', 'claim_status', 'claim_text', 'claim_by', 'claim_via',
           'claim_until', 'claim_taken')
local worker = redis.call('HGET', key, 'worker')
if redis.call('EXISTS', P .. 'hb:' .. worker) == 0 then
  return {'released', unpack(settle(id, key, 'abandoned', abandon_reason(worker), '', '', '',
                                    ARGV[4]))}
end
return {'released', unpack(redis.call('HGETALL', key))}
"""
)

ESCALATE = """
-- ARGV: P, id, escalation (JSON)
local key = ARGV[1] .. 'req:' .. ARGV[2]
if redis.call('HGET', key, 'status') ~= 'open' then return 0 end
local fields = redis.call('HGETALL', key)
local obj = {type = 'escalated', escalation = ARGV[3]}
for i = 1, #fields, 2 do obj[fields[i]] = fields[i + 1] end
redis.call('PUBLISH', ARGV[1] .. 'events', cjson.encode(obj))
return 1
"""

RESTORE = (
    _PRELUDE
    + """
-- ARGV: P, id, data, worker, status, text, detail, at, by, via, retention, then claim
-- fields (claim, claim_status, claim_text, claim_by, claim_via, claim_until, claim_taken)
-- Puts back a record the board lost; or settles the owner's request the board shows open
-- (a failover lost the settle: the owner's record is the truth). Never touches another
-- settled record, nor another worker's open one.
local id, worker = ARGV[2], ARGV[4]
local key = P .. 'req:' .. id
local status = redis.call('HGET', key, 'status')
if status and not (status == 'open' and redis.call('HGET', key, 'worker') == worker) then
  return 0
end
redis.call('HSET', key, 'data', ARGV[3], 'worker', worker, 'status', ARGV[5], 'text', ARGV[6],
           'detail', ARGV[7], 'at', ARGV[8], 'by', ARGV[9], 'via', ARGV[10])
if ARGV[12] ~= '' then
  redis.call('HSET', key, 'claim', ARGV[12], 'claim_status', ARGV[13], 'claim_text', ARGV[14],
             'claim_by', ARGV[15], 'claim_via', ARGV[16], 'claim_until', ARGV[17],
             'claim_taken', ARGV[18])
else
  redis.call('HDEL', key, 'claim', 'claim_status', 'claim_text', 'claim_by', 'claim_via',
             'claim_until', 'claim_taken')
end
redis.call('EXPIRE', key, ARGV[11])
if status == 'open' then
  redis.call('HDEL', P .. 'open', id)
  redis.call('SREM', P .. 'wopen:' .. worker, id)
  announce('settled', worker, redis.call('HGETALL', key))
end
return 1
"""
)

EPOCH = """
-- ARGV: P, the epoch id this client saw before ('' if none), a fresh id to use if none is set,
-- '1' when asked because an id was missing ('0' when a client (re)subscribes)
-- A board's epoch is created by the first client to look: a worker or the service when it
-- subscribes. A client that saw another epoch before, or that misses an id on a board with
-- no epoch (somebody got that id from this board), knows the server lost the board's state
-- (restarted without persistence): it marks when (lost_at, once).
-- Returns {epoch id, seconds since lost_at ('' if never)}.
local key = ARGV[1] .. 'epoch'
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local id = redis.call('HGET', key, 'id')
local created = false
if not id then
  id = ARGV[3]
  created = true
  redis.call('HSET', key, 'id', id)
end
local lost = redis.call('HGET', key, 'lost_at')
if not lost and ((ARGV[2] ~= '' and ARGV[2] ~= id) or (created and ARGV[4] == '1')) then
  lost = string.format('%.6f', now)
  redis.call('HSET', key, 'lost_at', lost)
end
if not lost then return {id, ''} end
return {id, string.format('%.6f', now - tonumber(lost))}
"""
