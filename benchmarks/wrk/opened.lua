-- benchmarks/inbox, step 4: the member taps pushes: each thread reports the opening of its
-- share of the items in BENCH_IDS, one after another, then again from the first.
dofile("benchmarks/wrk/threads.lua")

function init(args)
  headers = { ["Authorization"] = "Bearer " .. os.getenv("MEMBER_TOKEN"), ["Content-Type"] = "application/json" }
  ids = thread_ids()
  next_id = 0
end

function request()
  next_id = next_id % #ids + 1
  return wrk.format("POST", "/v1/notifications/" .. ids[next_id] .. "/opened", headers, "{}")
end
