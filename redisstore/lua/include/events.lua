-- events.lua: the partition's event stream P events (spec/events.md): the
-- events of the transitions a call made, gathered as they happen and
-- written by finalize in one XADD (one entry per call, at most EV.CHUNK
-- events an entry), so that no event is written for a transition that did
-- not happen and none is lost for one that did.
--
--!include call.lua

-- EV.MAXLEN is the stream's default cap in entries (the seq hash's ev
-- absent): redisstore.DefaultEventsMaxLen; EV.CHUNK the most events of an
-- entry. (Fields of EV, not locals: the library's top level has few
-- registers left.)
EV.MAXLEN = '100000'
EV.CHUNK = 400

-- EV.add records event typ of id (a job ID, or a workflow ID for the
-- workflow_ types) with attempt a (a number or a numeric string) and
-- reason r: "<type> <id> <attempt> <bytes of reason> <reason>", then
-- " <worker>" when w, the running attempt's field w ("<start ms>
-- <worker>", attempts.lua), names one. Nothing when the namespace's
-- events are off.
function EV.add(typ, id, a, r, w)
  if EV.cfg == 'off' then return end
  local l = EV.l
  if not l then
    l = {}
    EV.l = l
  end
  -- the common attempts and an empty reason without a number's
  -- formatting (Lua formats one with sprintf)
  if a == 0 then
    a = '0'
  elseif a == 1 then
    a = '1'
  end
  -- the worker of w, found once for the w of the last event (a batch's
  -- jobs share the claim's w, and a finish's jobs their claim's)
  local wk
  if w then
    if w == EV.w then
      wk = EV.wk
    else
      wk = string.match(w, ' (.+)$')
      EV.w, EV.wk = w, wk
    end
  end
  -- one concatenation an event
  if r == '' then
    if wk then
      l[#l + 1] = typ .. ' ' .. id .. ' ' .. a .. ' 0  ' .. wk
    else
      l[#l + 1] = typ .. ' ' .. id .. ' ' .. a .. ' 0 '
    end
  elseif wk then
    l[#l + 1] = typ .. ' ' .. id .. ' ' .. a .. ' ' .. #r .. ' ' .. r .. ' ' .. wk
  else
    l[#l + 1] = typ .. ' ' .. id .. ' ' .. a .. ' ' .. #r .. ' ' .. r
  end
end

-- EV.flush writes the gathered events: XADD P events with the cap (the
-- seq hash's ev "<max entries>:<max age ms>", 0 for no such cap; absent:
-- EV.MAXLEN entries), trimmed approximately; fields t (the call's now)
-- and e (the events in order, joined by newlines: a reason's length
-- tells where it ends, whatever bytes it holds).
function EV.flush()
  local l = EV.l
  if not l then return end
  EV.l = nil
  local key = P .. 'events'
  local maxlen, age = EV.MAXLEN, '0'
  if EV.cfg then maxlen, age = string.match(EV.cfg, '^(%d+):(%d+)$') end
  -- the XADD's arguments given directly, not built in a table (a table
  -- that grows reallocates: thousands of instructions a call)
  local n = #l
  for i = 1, n, EV.CHUNK do
    local e
    if n == 1 then
      e = l[1]
    else
      e = table.concat(l, '\n', i, math.min(i + EV.CHUNK - 1, n))
    end
    if maxlen and maxlen ~= '0' then
      redis.call('XADD', key, 'MAXLEN', '~', maxlen, '*', 't', NOW_S, 'e', e)
    else
      redis.call('XADD', key, '*', 't', NOW_S, 'e', e)
    end
  end
  -- the age cap, by the server's clock (the stream IDs'), at most once a
  -- call
  if age and age ~= '0' then
    local t = redis.call('TIME')
    local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(age)
    if ms > 0 then redis.call('XTRIM', key, 'MINID', '~', fmt(ms)) end
  end
end
