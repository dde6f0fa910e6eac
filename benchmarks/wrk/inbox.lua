-- benchmarks/inbox, step 2: the member app's inbox (the first page).
function init(args)
  headers = { ["Authorization"] = "Bearer " .. os.getenv("MEMBER_TOKEN") }
end

function request()
  return wrk.format("GET", "/v1/me/inbox", headers)
end
