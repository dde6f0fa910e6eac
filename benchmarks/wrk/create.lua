-- benchmarks/api, step 1: each thread creates BENCH_CREATE activities as the manager and
-- writes their ids to BENCH_IDS.<thread>, then stops.
dofile("benchmarks/wrk/threads.lua")

function init(args)
  out = io.open(os.getenv("BENCH_IDS") .. "." .. index, "w")
  wanted = tonumber(os.getenv("BENCH_CREATE"))
  headers = { ["Authorization"] = "Bearer " .. os.getenv("MANAGER_TOKEN"), ["Content-Type"] = "application/json" }
  sent, created = 0, 0
end

function request()
  sent = sent + 1
  local body = string.format(
    '{"team":"ops","assignee":"member@bench.test","name":"Bench %d-%d","deadline":"2027-06-30","priority":"p2"}', index, sent)
  return wrk.format("POST", "/v1/activities", headers, body)
end

function response(status, headers, body)
  -- Requests still in flight when the thread stops are answered after the file is closed.
  if not out then return end
  if status == 201 then
    local location = headers["Location"] or headers["location"]
    out:write(location:match("[^/]+$"), "\n")
    created = created + 1
  end
  if created >= wanted then
    out:close()
    out = nil
    wrk.thread:stop()
  end
end
