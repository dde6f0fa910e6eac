-- Shared by the scripts of benchmarks/api and benchmarks/inbox (loaded with dofile; wrk runs from
-- the repository's root): each thread's number, and its share of the ids in BENCH_IDS.
local count = 0
function setup(thread)
  count = count + 1
  thread:set("index", count)
end

-- Every BENCH_THREADS-th id of BENCH_IDS, from this thread's own (its index).
function thread_ids()
  local threads = tonumber(os.getenv("BENCH_THREADS") or "2")
  local ids = {}
  local n = 0
  for line in io.lines(os.getenv("BENCH_IDS")) do
    if n % threads == index - 1 then ids[#ids + 1] = line end
    n = n + 1
  end
  return ids
end
