-- text.lua: string helpers that keep within what Redis 7 and miniredis both
-- run (shared/lua-compat.md: table.concat and unpack in chunks of 1,000).
--
--!include call.lua

-- join concatenates list with sep, 1,000 items a table.concat.
local function join(list, sep)
  if #list <= 1000 then return table.concat(list, sep) end
  local parts = {}
  for i = 1, #list, 1000 do
    parts[#parts + 1] = table.concat(list, sep, i, math.min(i + 999, #list))
  end
  return join(parts, sep)
end

-- ilist parses "1,5,7" into {1, 5, 7}; nil or "" is {}.
local function ilist(s)
  local out = {}
  if not s or s == '' then return out end
  for x in string.gmatch(s, '[^,]+') do out[#out + 1] = tonumber(x) end
  return out
end

-- pad15 formats a creation time as the 15 digits of listing members; the
-- call's now (the common case: a job that ends now) from NOW_S, already
-- formatted (a string.format costs some 2,000 instructions, a
-- concatenation a few hundred).
local function pad15(c)
  if c == NOW and #NOW_S == 13 then return '00' .. NOW_S end
  return string.format('%015d', c)
end

-- append adds list's items to out.
local function append(out, list)
  local n = #out
  for i = 1, #list do out[n + i] = list[i] end
end

-- bytes_less orders strings byte by byte, as Go does: Lua's < follows the
-- server's locale (strcoll), which Redis takes from its environment.
local function bytes_less(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
