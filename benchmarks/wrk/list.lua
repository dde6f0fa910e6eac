-- benchmarks/api, step 3: the member app's activity list (the first page).
function init(args)
  headers = { ["Authorization"] = "Bearer " .. os.getenv("MEMBER_TOKEN") }
end

function request()
  return wrk.format("GET", "/v1/activities", headers)
end
