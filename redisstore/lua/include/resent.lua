-- resent.lua: what a finish + claim leaves for its own resend (spec/scripts.md,
-- A resent finish + claim; protocol 3 step 4). go-redis sends a call
-- again when its connection broke after the request left, and the call,
-- named by its nonce, must then hand out the leases of its first run that
-- are still held, and no others. A claim alone keeps them in
-- P claim:<nonce> (lease.lua's claim_once). A finish + claim whose last
-- outcome it ends keeps instead the nonce in that outcome's last Settled
-- (ls, which the call writes anyway): its first word is then
-- "<token>|<nonce>". The resend finds that outcome settled (a repeat of its
-- last finish) and so finds the mark, and the first run's leases are those
-- of the claim's queues whose deadline is the outcome's end plus the lease
-- (every lease of one call ends at its now + lease) and whose token
-- carries the nonce, in the order of their tokens' counter.
--
--!include call.lua
--!include fields.lua
--!include queue.lua
--!include job.lua
--!include lease.lua

-- FF.rs_begin readies the mark of finish.lua's call (ARGV A, c the index
-- of the workflows KEEP names, k outcomes, max the claim's): when the call
-- claims and a record outlives a lease (retention at least the lease, so
-- that a resend within the lease finds it), its last outcome's ls carries
-- "|<nonce>" (FF.rs_tok).
function FF.rs_begin(A, c, k, max)
  if max <= 0 then return end
  local lease = tonumber(A[c + 2])
  CALL.rnonce, CALL.rlease = A[c + 3], lease
  if k > 0 and RETENTION >= lease then
    local b = 5 + 9 * (k - 1)
    CALL.rn, CALL.ri, CALL.rk = '|' .. A[c + 3], A[b], A[b + 1]
  end
end

-- FF.rs_tok returns the first word of the ls a settle of job id with
-- token tok writes: the token, with the call's mark when this is the
-- call's last outcome (CALL.rw then says the mark is written, so that the
-- claim writes no record of its own). The caller settles the outcome to
-- an end (not queued again) and its claim runs (no cascade stopped).
function FF.rs_tok(id, tok)
  if CALL.rn and id == CALL.ri and tok == CALL.rk then
    CALL.rw = true
    return tok .. CALL.rn
  end
  return tok
end

-- FF.rs_first returns the token of ls (a last Settled), without the mark.
function FF.rs_first(ls)
  return string.match(ls, '^[^ |]*')
end

-- FF.rs_found notes, for a repeat of job j's last finish (ls its last
-- Settled), whether this call's first run settled it with its mark: the
-- deadline of that run's leases, its end plus the lease, in CALL.rf.
function FF.rs_found(ls, j)
  local n = CALL.rnonce
  if not n then return end
  local w = string.match(ls, '^[^ ]*')
  local bar = string.find(w, '|', 1, true)
  if bar and string.sub(w, bar + 1) == n then
    local en = tonumber(jget(j, F_ENDED))
    if en then CALL.rf = en + CALL.rlease end
  end
end

-- FF.rs_token returns the lease token job id holds (nil: none, or its
-- record gone), reading its record without the call's job tables.
function FF.rs_token(id)
  local s1 = string.find(id, '/', 1, true)
  local v
  if not s1 then
    v = redis.pcall('HGET', P .. 'j:' .. id, F_TOKEN)
  else
    local wid, name, pre = string.sub(id, 1, s1 - 1), string.sub(id, s1 + 1), 't'
    local s2 = string.find(name, '/', 1, true)
    if s2 then name, pre = string.sub(name, 1, s2 - 1), 'u' end
    local is = redis.pcall('HGET', P .. 'w:' .. wid .. ':i', name)
    if type(is) ~= 'string' then return nil end
    v = redis.pcall('HGET', P .. 'w:' .. wid, pre .. is .. '.' .. F_TOKEN)
  end
  if type(v) ~= 'string' then return nil end
  return v
end

-- FF.rs_reclaim hands out again the leases this call's first run took
-- (the run whose mark FF.rs_found found: its leases end at CALL.rf) that
-- are still held: in each queue once, the lease set's members of that
-- deadline (at most 1,000 a queue: a bound on the work, far above what
-- one queue leases in a millisecond) whose token carries the nonce, in
-- the order of the tokens' counter (the order the first run leased them
-- in). Appends their Claimed to out (lease.lua's reclaimed) and returns
-- how many.
function FF.rs_reclaim(queues, out)
  local dls, nonce = fmt(CALL.rf), CALL.rnonce
  local got, seen = {}, {}
  for _, q in ipairs(queues) do
    if not seen[q] then
      seen[q] = true
      local ids = redis.call('ZRANGEBYSCORE', qkey(q, 'a'), dls, dls, 'LIMIT', '0', '1000')
      for _, id in ipairs(ids) do
        local tk = FF.rs_token(id)
        local cnt, rest = nil, nil
        if tk then cnt, rest = string.match(tk, '^(%d+)%-(.*)$') end
        if cnt and string.sub(rest, 1, #nonce) == nonce then
          local tail = string.sub(rest, #nonce + 1)
          if tail == '' or string.match(tail, '^%.%d+$') then got[#got + 1] = {tonumber(cnt), id, tk} end
        end
      end
    end
  end
  table.sort(got, function(a, b) return a[1] < b[1] end)
  local n = 0
  for _, g in ipairs(got) do
    if reclaimed(g[2], g[3], out) then n = n + 1 end
  end
  return n
end
