-- The lua case: table- and string-heavy work over a generated corpus (gen_text.py).
-- Word counts in a hash table, bigram keys built by concatenation, per-word position lists
-- (tables of tables), a sort of all distinct words by count, gsub rewrites of every line, and
-- a rolling buffer of short-lived strings. Prints counts and a checksum of the results.
local path = arg[1]
local counts, bigrams, positions, lines = {}, {}, {}, {}
local nwords = 0
for line in io.lines(path) do
  lines[#lines + 1] = line
  local prev = nil
  for w in line:gmatch("%a+") do
    nwords = nwords + 1
    counts[w] = (counts[w] or 0) + 1
    local p = positions[w]
    if p == nil then p = {}; positions[w] = p end
    p[#p + 1] = nwords
    if prev then
      local key = prev .. "|" .. w
      bigrams[key] = (bigrams[key] or 0) + 1
    end
    prev = w
  end
end
local distinct = {}
for w in pairs(counts) do distinct[#distinct + 1] = w end
table.sort(distinct, function(a, b)
  if counts[a] ~= counts[b] then return counts[a] > counts[b] end
  return a < b
end)
local sum = 0
for i, line in ipairs(lines) do
  local up = line:gsub("(%a)(%a*)", function(a, rest) return a:upper() .. rest:reverse() end)
  sum = (sum + #up * i) % 1000000007
end
local nbigrams = 0
for k, v in pairs(bigrams) do nbigrams = nbigrams + 1; sum = (sum + #k * v) % 1000000007 end
local ring = {}
for i = 1, #distinct do
  ring[i % 512 + 1] = string.format("%s:%d:%d", distinct[i], counts[distinct[i]], #positions[distinct[i]])
  sum = (sum + #ring[i % 512 + 1]) % 1000000007
end
print(string.format("words %d distinct %d bigrams %d top %s checksum %d",
  nwords, #distinct, nbigrams, distinct[1], sum))
