-- benchmarks/inbox, step 3: the member app's badge and counts.
function init(args)
  headers = { ["Authorization"] = "Bearer " .. os.getenv("MEMBER_TOKEN") }
end

function request()
  return wrk.format("GET", "/v1/me/inbox/counts", headers)
end
