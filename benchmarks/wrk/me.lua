-- benchmarks/api, step 5: the member app's profile (GET /v1/me), the lightest
-- authenticated read.
function init(args)
  headers = { ["Authorization"] = "Bearer " .. os.getenv("MEMBER_TOKEN") }
end

function request()
  return wrk.format("GET", "/v1/me", headers)
end
