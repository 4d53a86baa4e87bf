package fleetbudget

import "github.com/redis/go-redis/v9"

// The scripts keep a caller's budget in two keys that share one hash tag (so that a cluster
// keeps them on one node): a hash of its buckets (r: requests, t: tokens, at: when they were
// last refilled, in microseconds of the server's TIME) and a sorted set of its running
// requests' leases (member: lease id, score: expiry in the same microseconds). Redis's own
// clock is the one every replica reads, so their clocks need not agree. A bucket refills as
// package bucket's does, up to its burst; a key that would refill to full is left to expire,
// which is the same as a full one. Lua numbers are returned as strings, since Redis truncates
// numbers a script returns to integers.

// prelude is what the scripts share: the server's time, and the buckets refilled to it.
const prelude = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local rr, rb = tonumber(ARGV[1]), tonumber(ARGV[2])
local tr, tb = tonumber(ARGV[3]), tonumber(ARGV[4])
local s = redis.call('HMGET', KEYS[1], 'r', 't', 'at')
local dt = math.max(now - (tonumber(s[3]) or now), 0) / 1000000
local r = math.min(rb, (tonumber(s[1]) or rb) + dt * rr)
local k = math.min(tb, (tonumber(s[2]) or tb) + dt * tr)

local function store()
  redis.call('HSET', KEYS[1], 'r', r, 't', k, 'at', now)
  local full = 0
  if rr > 0 then full = math.max(full, (rb - r) / rr) end
  if tr > 0 then full = math.max(full, (tb - k) / tr) end
  redis.call('PEXPIRE', KEYS[1], math.min(math.ceil(full * 1000), 1e10) + 1000)
end
` + keepLeases

// keepLeases sets a lease set to expire a second after its latest lease: never sooner, so
// that a replica with a shorter LeaseTTL (a rolling change of it) does not expire the whole
// set, and the slots of others still running with it.
const keepLeases = `
local function keepLeases(key)
  local latest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2]
  if latest then redis.call('PEXPIREAT', key, math.ceil(tonumber(latest) / 1000) + 1000) end
end
`

// takeScript admits one request or changes nothing. ARGV: the requests' rate and burst, the
// tokens' rate and burst, the request's tokens, the most requests that may run (0: no limit),
// the lease's life in microseconds, the lease's id. It returns {1 admitted | 0 refused |
// 2 refused for concurrency, requests held, tokens held}, the levels before any debit.
var takeScript = redis.NewScript(prelude + `
local cost, most = tonumber(ARGV[5]), tonumber(ARGV[6])
local levels = {string.format('%.17g', r), string.format('%.17g', k)}
if most > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= most then return {2, levels[1], levels[2]} end
end
if (rr > 0 and r < 1) or (tr > 0 and k < cost) then return {0, levels[1], levels[2]} end
if rr > 0 then r = r - 1 end
if tr > 0 then k = k - cost end
store()
if most > 0 then
  local life = tonumber(ARGV[7])
  redis.call('ZADD', KEYS[2], now + life, ARGV[8])
  keepLeases(KEYS[2])
end
return {1, levels[1], levels[2]}
`)

// settleScript ends a request: frees its lease and gives back tokens (negative: takes more,
// into debt) and, when ARGV[6] is 1, its request. ARGV 1-4 as takeScript's; ARGV[7]: the
// lease's id.
var settleScript = redis.NewScript(prelude + `
redis.call('ZREM', KEYS[2], ARGV[7])
local back, request = tonumber(ARGV[5]), tonumber(ARGV[6])
if back == 0 and request == 0 then return 0 end
if tr > 0 then k = math.min(tb, k + back) end
if rr > 0 and request > 0 then r = math.min(rb, r + 1) end
store()
return 1
`)

// renewSource pushes the expiry of the leases ARGV[2...] in KEYS[1] to now + ARGV[1]
// microseconds. A lease already gone (settled, or expired when renewals did not land) stays
// gone: XX never adds one, and GT never shortens one.
const renewSource = keepLeases + `
local t = redis.call('TIME')
local life = tonumber(ARGV[1])
local expiry = tonumber(t[1]) * 1000000 + tonumber(t[2]) + life
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', 'GT', expiry, ARGV[i]) end
keepLeases(KEYS[1])
return 0
`
