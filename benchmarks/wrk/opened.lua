-- benchmarks/inbox, step 4: the members tap pushes: each thread reports the opening of its
-- share of the items in BENCH_IDS (lines of "token id": the item's person's token), one
-- after another, then again from the first.
dofile("benchmarks/wrk/threads.lua")

function init(args)
  items = {}
  for _, line in ipairs(thread_ids()) do
    local token, id = line:match("^(%S+) (%S+)$")
    items[#items + 1] = {
      id = id,
      headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" },
    }
  end
  next_item = 0
end

function request()
  next_item = next_item % #items + 1
  local item = items[next_item]
  return wrk.format("POST", "/v1/notifications/" .. item.id .. "/opened", item.headers, "{}")
end
