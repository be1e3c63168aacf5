#!/usr/bin/env bash
# A private Docker engine (Debian docker.io) for building and testing the image
# on a CI machine that has no running engine and no registry.
#
#   hack/image/engine.sh start    start dockerd unless ours already answers
#   hack/image/engine.sh stop     stop the dockerd this script started (by PID)
#   hack/image/engine.sh status   exit 0 when ours answers
#   hack/image/engine.sh env      print the DOCKER_HOST line to eval
#   hack/image/engine.sh run -- CMD...
#                                 run CMD with an engine: $DOCKER_HOST when
#                                 set (it must answer), else ours; ours is
#                                 started when it is not running and then
#                                 stopped by PID when CMD ends, pass or fail
#
# Everything lives in ENGINE_DIR (default ~/.cache/jobset-flux/engine, outside
# every checkout): the socket, the pidfile, the log, dockerd's exec-root and
# its data-root (kept between runs and clones, so imported base images and the
# layers that compile the dependencies are reused). One `run` at a time uses
# the directory (a lock beside it), so a second clone's run waits instead of
# having the engine stopped under it; each `run` removes untagged images older
# than a day (not younger: a multi-stage build's build stage is untagged, and
# it is what holds the compiled dependencies), so the data-root does not grow
# by one build per commit for good. The engine gets
# no bridge network and touches no iptables rules: builds run with
# --network none and KRM functions run with --network none anyway.
# Needs root (dockerd).
set -euo pipefail

dir=${ENGINE_DIR:-${JOBSET_FLUX_CACHE:-$HOME/.cache/jobset-flux}/engine}
sock=$dir/docker.sock
pidfile=$dir/dockerd.pid
log=$dir/dockerd.log
host=unix://$sock

answers() { DOCKER_HOST=$host docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

pid_alive() { [[ -s $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

start() {
  if answers; then
    echo "engine: already running at $host"
    return 0
  fi
  command -v dockerd >/dev/null || { echo "engine: dockerd not found; install Debian docker.io (.ci/apt/image.txt)" >&2; return 1; }
  (( EUID == 0 )) || { echo "engine: dockerd needs root" >&2; return 1; }
  if pid_alive; then
    echo "engine: dockerd $(cat "$pidfile") is running but does not answer on $sock; see $log" >&2
    return 1
  fi
  mkdir -p "$dir/data" "$dir/exec"
  rm -f "$sock" "$pidfile"
  # setsid: the engine outlives this shell and ignores the caller's Ctrl-C;
  # whoever started it stops it with "stop".
  # 9>&-: dockerd must not inherit run's lock (fd 9) and hold it forever.
  setsid dockerd \
    --host "$host" \
    --pidfile "$pidfile" \
    --data-root "$dir/data" \
    --exec-root "$dir/exec" \
    --bridge none --iptables=false --ip-masq=false --ip6tables=false \
    --log-level warn \
    </dev/null >"$log" 2>&1 9>&- &
  local launched=$! i
  for ((i = 0; i < 120; i++)); do
    if answers; then
      echo "engine: dockerd $(cat "$pidfile" 2>/dev/null || echo "$launched") answers at $host ($((i / 2)) s)"
      return 0
    fi
    if ! kill -0 "$launched" 2>/dev/null; then
      echo "engine: dockerd exited; last lines of $log:" >&2
      tail -n 20 "$log" >&2
      return 1
    fi
    sleep 0.5
  done
  echo "engine: dockerd did not answer in 60 s; last lines of $log:" >&2
  tail -n 20 "$log" >&2
  kill "$launched" 2>/dev/null || true
  return 1
}

stop() {
  if ! [[ -s $pidfile ]]; then
    echo "engine: not running (no $pidfile)"
    return 0
  fi
  local pid i
  pid=$(cat "$pidfile")
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "engine: dockerd $pid already gone"
    rm -f "$pidfile"
    return 0
  fi
  kill -TERM "$pid"
  for ((i = 0; i < 60; i++)); do
    kill -0 "$pid" 2>/dev/null || { echo "engine: dockerd $pid stopped"; return 0; }
    sleep 0.5
  done
  echo "engine: dockerd $pid ignored SIGTERM for 30 s; sending SIGKILL" >&2
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

run() {
  if [[ -n ${DOCKER_HOST:-} ]]; then
    docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || {
      echo "engine: DOCKER_HOST=$DOCKER_HOST does not answer (unset it to use a private dockerd)" >&2
      return 1
    }
    "$@"
    return
  fi
  export DOCKER_HOST=$host
  mkdir -p "$(dirname "$dir")"
  exec 9>>"$dir.lock"
  flock -n 9 || { echo "engine: another run uses $dir; waiting"; flock 9; }
  if answers; then
    "$@"
    return
  fi
  start
  started_pid=$(cat "$pidfile")
  # Stop exactly the dockerd started here, whatever CMD does; INT and TERM
  # become ordinary exits so that the EXIT trap runs.
  trap 'stop_pid "$started_pid"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  local rc=0
  "$@" || rc=$?
  docker image prune --force --filter until=24h >/dev/null || true
  return "$rc"
}

# stop_pid stops dockerd PID if the pidfile still names it.
stop_pid() {
  [[ -s $pidfile && $(cat "$pidfile") == "$1" ]] && stop
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  status) answers ;;
  env) echo "export DOCKER_HOST=$host" ;;
  run)
    shift
    [[ ${1:-} == -- ]] && shift
    (($#)) || { echo "usage: $0 run -- CMD..." >&2; exit 2; }
    run "$@"
    ;;
  *) echo "usage: $0 start|stop|status|env|run -- CMD..." >&2; exit 2 ;;
esac
