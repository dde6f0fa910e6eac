# Shared by benchmarks/api and benchmarks/inbox (sourced from the repository's root, after
# `set -euo pipefail`): a release build of herald (or HERALD_BIN), a throwaway HERALD_HOME with
# tenant `bench` (team ops, manager@bench.test and member@bench.test, their tokens in
# MANAGER_TOKEN and MEMBER_TOKEN), `herald serve` on a free port at $base with rate limits far
# above what two cores can do, and the helpers that measure a wrk phase: `phase NAME TITLE`
# runs benchmarks/wrk/NAME.lua for $seconds at $connections and prints the CPU a request cost
# herald serve and PostgreSQL.
scripts/install-deps wrk
if [ -n "${HERALD_BIN:-}" ]; then
  herald="$HERALD_BIN"
else
  swift build -c release --traits Server --product herald >/dev/null
  herald="$(swift build -c release --traits Server --show-bin-path)/herald"
fi

work=$(mktemp -d /tmp/herald-api-bench.XXXXXX)
chmod 755 "$work"
export HERALD_HOME="$work/home" HERALD_LOG_LEVEL=warning HERALD_TENANT=bench
unset HERALD_DATABASE_URL
serve_pid=
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null || true
  "$herald" db stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"$herald" tenant create bench --name "Bench" >/dev/null
"$herald" team create ops --name "Field Ops" >/dev/null
"$herald" user add manager@bench.test --name "Maya Manager" >/dev/null
"$herald" user add member@bench.test --name "Milo Member" >/dev/null
"$herald" team add-member ops manager@bench.test --role manager >/dev/null
"$herald" team add-member ops member@bench.test --role member >/dev/null
export MANAGER_TOKEN MEMBER_TOKEN
MANAGER_TOKEN=$("$herald" token create --user manager@bench.test | tail -n 1)
MEMBER_TOKEN=$("$herald" token create --user member@bench.test | tail -n 1)

# Rate limits far above what two cores can do: this measures the server, not the limiter.
"$herald" serve --port 0 --person-rate 1000000 --person-burst 1000000 >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
base=
for _ in $(seq 1 300); do
  base=$(grep -m1 '^http' "$work/serve.out" 2>/dev/null || true)
  [ -n "$base" ] && break
  kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$base" ] || { echo "herald serve did not start" >&2; exit 1; }
echo "herald serve at $base ($("$herald" --version 2>/dev/null || echo herald)); $(nproc) cores"

# CPU time in clock ticks (user + system): a process's own, and the embedded cluster's (the
# postmaster with the children it has reaped, and its live backends).
ticks_per_second=$(getconf CLK_TCK)
process_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
cluster_ticks() {
  local postmaster
  postmaster=$(head -n 1 "$HERALD_HOME/postgres/data/postmaster.pid")
  # A process may end between the glob and its read: cat skips it (and then fails, which
  # under pipefail would end the script).
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v pm="$postmaster" '
    {
      pid = $1
      sub(/^.*\) /, "")  # from the field after the command name: $1 is the state, $2 the parent
      if (pid == pm) total += $12 + $13 + $14 + $15
      else if ($2 == pm) total += $12 + $13
    }
    END { print total + 0 }'
}
# cpu_split START_SERVE START_CLUSTER REQUESTS [START_WAL]: µs of CPU a request, herald serve
# and PostgreSQL (and the bytes of WAL a request wrote, from the WAL position before).
cpu_split() {
  local serve cluster wal=""
  serve=$(($(process_ticks "$serve_pid") - $1))
  cluster=$(($(cluster_ticks) - $2))
  if [ -n "${4:-}" ]; then wal=$(($(wal_position) - $4)); fi
  awk -v s="$serve" -v c="$cluster" -v n="$3" -v hz="$ticks_per_second" -v w="$wal" 'BEGIN {
    printf "CPU a request: herald serve %.0f µs, PostgreSQL %.0f µs, together %.0f µs (%d requests)\n",
      s / hz / n * 1e6, c / hz / n * 1e6, (s + c) / hz / n * 1e6, n
    if (w != "") printf "WAL a request: %.0f bytes\n", w / n }'
}

# wal_position: where PostgreSQL's write-ahead log is now, in bytes.
wal_position() { database -Atc "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn" | cut -d. -f1; }
requests_of() { awk '/requests in/ { print $1 }' "$1"; }

# wrk prints "Non-2xx or 3xx responses: N" when any request was refused.
check() {
  cat "$1"
  if grep -q "Non-2xx" "$1"; then echo "some requests were refused (above): the run is void" >&2; exit 1; fi
}


# phase NAME TITLE: wrk with benchmarks/wrk/NAME.lua for the run's length, then the CPU split.
phase() {
  echo; echo "== $1: $2, ${seconds}s, $connections connections"
  local serve_before cluster_before wal_before
  wal_before=$(wal_position)
  serve_before=$(process_ticks "$serve_pid")
  cluster_before=$(cluster_ticks)
  wrk -t "$threads" -c "$connections" -d "${seconds}s" --latency -s "benchmarks/wrk/$1.lua" "$base" >"$work/$1.txt"
  check "$work/$1.txt"
  cpu_split "$serve_before" "$cluster_before" "$(requests_of "$work/$1.txt")" "$wal_before"
}

# The statistics autovacuum would gather within its next minute, now: a table that grew from
# nothing in the last half minute has none, and the planner then sorts the whole of it.
analyze() { database -qc ANALYZE; }

# database ARGUMENTS: psql on the embedded cluster (as its owner when run as root).
database() {
  local as_server=()
  if [ "$(id -u)" -eq 0 ]; then as_server=(runuser -u "$(stat -c %U "$HERALD_HOME/postgres/data")" --); fi
  "${as_server[@]}" psql -h "$HERALD_HOME/postgres/run" -U herald -d herald "$@"
}

# create COUNT: the manager creates COUNT activities for the member (benchmarks/wrk/create.lua),
# their ids in $work/ids.
create() {
  export BENCH_IDS="$work/ids" BENCH_CREATE=$(($1 / threads)) BENCH_THREADS=$threads
  # wrk runs for its whole duration even when every thread has stopped; SIGINT ends it early.
  wrk -t "$threads" -c "$connections" -d 600s --latency -s benchmarks/wrk/create.lua "$base" >"$work/create.txt" &
  local wrk_pid=$!
  local started finished
  started=$(date +%s.%N)
  while kill -0 "$wrk_pid" 2>/dev/null && [ "$(cat "$work"/ids.* 2>/dev/null | wc -l)" -lt "$1" ]; do sleep 0.1; done
  finished=$(date +%s.%N)
  kill -INT "$wrk_pid" 2>/dev/null || true
  wait "$wrk_pid" || true
  check "$work/create.txt"
  cat "$work"/ids.* >"$work/ids"
  echo "$(wc -l <"$work/ids") activities in $(awk -v a="$started" -v b="$finished" 'BEGIN { printf "%.1f", b - a }') s (wrk's Requests/sec above counts the wait after the last one)"
}
