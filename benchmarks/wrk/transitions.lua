-- benchmarks/api, step 2: thread i of n takes every n-th activity id from BENCH_IDS and
-- walks them: request 3k starts activity k (as its member), request 3k+1 completes
-- activity k-50 (member) and 3k+2 approves activity k-100 (manager). 150 requests lie
-- between two steps of one activity, far more than the requests one thread has in flight,
-- so each step finds the one before it done. The first 100 completes and approves of a
-- thread have no activity yet; they read one instead (GET), a fraction of a percent.
dofile("benchmarks/wrk/threads.lua")

local lag = 50

function init(args)
  local manager = { ["Authorization"] = "Bearer " .. os.getenv("MANAGER_TOKEN") }
  local member = { ["Authorization"] = "Bearer " .. os.getenv("MEMBER_TOKEN") }
  ids = thread_ids()
  as = { start = member, complete = member, approve = manager }
  step = 0
  -- wrk calls the first thread's request() once before the run, to look at it, and sends
  -- nothing of it: that call must not use up a start.
  looked = index ~= 1
end

function request()
  if not looked then
    looked = true
    return wrk.format("GET", "/healthz")
  end
  local k, phase = math.floor(step / 3) + 1, step % 3
  step = step + 1
  if k > #ids then
    print("out of activities: run benchmarks/api with more ACTIVITIES or fewer seconds")
    os.exit(1)
  end
  if phase == 0 then
    return wrk.format("POST", "/v1/activities/" .. ids[k] .. "/start", as.start)
  end
  local back = k - lag * phase
  if back < 1 then
    return wrk.format("GET", "/v1/activities/" .. ids[k], as.start)
  end
  if phase == 1 then
    return wrk.format("POST", "/v1/activities/" .. ids[back] .. "/complete", as.complete)
  end
  return wrk.format("POST", "/v1/activities/" .. ids[back] .. "/approve", as.approve)
end

local refusals = 0
function response(status, headers, body)
  if status >= 300 and refusals < 5 then
    refusals = refusals + 1
    print("refused: " .. status .. " " .. body)
  end
end
