-- benchmarks/api, step 4: the member app opens activities one at a time
-- (GET /v1/activities/{id}), each thread cycling through its share of BENCH_IDS.
dofile("benchmarks/wrk/threads.lua")

function init(args)
  headers = { ["Authorization"] = "Bearer " .. os.getenv("MEMBER_TOKEN") }
  ids = thread_ids()
  next_id = 0
end

function request()
  next_id = next_id % #ids + 1
  return wrk.format("GET", "/v1/activities/" .. ids[next_id], headers)
end
