-- benchmarks/api, step 1: each thread creates BENCH_CREATE activities as the manager and
-- writes their ids to BENCH_IDS.<thread>, then stops. They are assigned to the people of
-- BENCH_ASSIGNEES (emails, comma-separated; member@bench.test when unset) in turn.
dofile("benchmarks/wrk/threads.lua")

function init(args)
  assignees = {}
  for email in string.gmatch(os.getenv("BENCH_ASSIGNEES") or "member@bench.test", "[^,]+") do
    assignees[#assignees + 1] = email
  end
  out = io.open(os.getenv("BENCH_IDS") .. "." .. index, "w")
  wanted = tonumber(os.getenv("BENCH_CREATE"))
  headers = { ["Authorization"] = "Bearer " .. os.getenv("MANAGER_TOKEN"), ["Content-Type"] = "application/json" }
  sent, created = 0, 0
end

function request()
  sent = sent + 1
  local body = string.format(
    '{"team":"ops","assignee":"%s","name":"Bench %d-%d","deadline":"2027-06-30","priority":"p2"}',
    assignees[(sent + index) % #assignees + 1], index, sent)
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
