"""The Lua scripts that make :class:`~voice_hitl.board.RedisBoard`'s steps atomic.

Keys under the prefix ``P`` (passed as ``ARGV[1]``; the board runs on one Redis server, not a
cluster): ``P req:ID`` (hash: data, status, worker, text, detail, at, by, via), ``P open``
(hash id -> data of the open requests), ``P wopen:W`` (set of worker W's open ids),
``P workers`` (set), ``P hb:W`` (a key that lives while W heartbeats). Events are published on
``P events`` (every request) and ``P events:W`` (W's requests) as the request hash in JSON with
a ``type`` of ``opened`` or ``settled``. Times come from the server's clock (``TIME``).
"""

from __future__ import annotations

__all__ = ["PUBLISH", "REAP", "SETTLE"]

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
