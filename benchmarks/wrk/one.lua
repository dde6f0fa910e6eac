-- benchmarks/api, step 4: the member app opens activities one at a time
-- (GET /v1/activities/{id}), each thread cycling through its share of BENCH_IDS.
local count = 0
function setup(thread)
  count = count + 1
  thread:set("index", count)
end

function init(args)
  headers = { ["Authorization"] = "Bearer " .. os.getenv("MEMBER_TOKEN") }
  local threads = tonumber(os.getenv("BENCH_THREADS") or "2")
  ids = {}
  local n = 0
  for line in io.lines(os.getenv("BENCH_IDS")) do
    if n % threads == index - 1 then ids[#ids + 1] = line end
    n = n + 1
  end
  next_id = 0
end

function request()
  next_id = next_id % #ids + 1
  return wrk.format("GET", "/v1/activities/" .. ids[next_id], headers)
end
