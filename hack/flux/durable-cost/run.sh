#!/bin/bash
# Measure what Flux state persistence costs a single broker: shutdown with
# and without a content dump, restart from the dump and from content.sqlite
# (fsck), a dump killed half-way, and [kvs] checkpoint-period against a
# SIGKILL. See docs/contributing/durable-state.md for the results and how to read
# them.
#
# Usage (as root, for the mount namespace):
#   hack/flux/durable-cost/run.sh [SCENARIO...]
# SCENARIO is one of: base-N (N jobs: 1000, 10000...), pending, kill-dump,
# kill-dump:base-N, ckpt-on, ckpt-off (default: base-1000 base-10000
# pending kill-dump ckpt-on ckpt-off; kill-dump uses the state base-10000
# left, or base-1000's when 10000 was not run).
#
# Environment:
#   FLUX_VIEW   the view build root holding opt/ (default: the jobset-flux
#               cache's flux-view-pmix full/ root)
#   RUN_UID     the user the brokers run as (default 1000); root is not used
#   WORK        scratch directory (default /tmp/durable-cost; each base-N,
#               pending and ckpt-* scenario starts from an empty
#               $WORK/<scenario>)
# Needs util-linux (unshare, setpriv, setsid), procps (ps) and bc. The
# default list takes about 40 minutes on 2 cores, 17 of them running the
# 10,000 jobs.
#
# Flux runs the way test/flux runs it: the host's root with the view's /opt
# laid over it (here a bind mount in a private mount namespace), flux by
# its absolute path, and the view's Fluxion found through the environment
# the generated entrypoint exports. Every figure goes to $WORK/results.txt
# as "scenario key value" lines; the broker logs stay in $WORK/<scenario>.
set -euo pipefail

VIEW=${FLUX_VIEW:-/root/.cache/jobset-flux/flux-view-pmix/033edc4217a94f71/full}
RUN_UID=${RUN_UID:-1000}
WORK=${WORK:-/tmp/durable-cost}

if [[ ${DURABLE_COST_NS:-} != 1 ]]; then
	if [[ $(id -u) != 0 ]]; then
		echo "run.sh: needs root (a private mount namespace to lay the view over /opt)" >&2
		exit 1
	fi
	exec env DURABLE_COST_NS=1 unshare --mount --propagation private -- "$0" "$@"
fi
mount --bind "$VIEW/opt" /opt

RUN_GID=$(id -g "$RUN_UID")
FLUX=/opt/view/bin/flux
AS=(setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --clear-groups
	env -i HOME="$WORK" TMPDIR="$WORK" PATH=/usr/bin:/bin LANG=C.UTF-8
	FLUX_MODULE_PATH_PREPEND=/opt/view/lib/flux/modules
	FLUX_MODPROBE_PATH_APPEND=/opt/view/etc/flux/modprobe
	FLUX_RC_EXTRA=/opt/view/etc/flux)

mkdir -p "$WORK"
chown "$RUN_UID:$RUN_GID" "$WORK"
RESULTS=$WORK/results.txt

now() { date +%s.%N; }
sub() { echo "$1 - $2" | bc -l | awk '{printf "%.2f", $1}'; }
log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
record() { # scenario key value...
	printf '%s %s %s\n' "$1" "$2" "${*:3}" | tee -a "$RESULTS" >&2
}

BROKER= # pid of the running broker (flux start execs it), its session id too
DIR=    # the scenario's directory: state/, conf-*/, logs
TAG=    # the current start's name: $DIR/$TAG.log is its broker log

session_kill() {
	local pids
	pids=$(ps -s "$BROKER" -o pid= || true)
	if [[ -n $pids ]]; then
		# shellcheck disable=SC2086 # one word per pid
		kill -KILL $pids 2>/dev/null || true
	fi
}
cleanup() {
	if [[ -n $BROKER ]] && kill -0 "$BROKER" 2>/dev/null; then
		session_kill
		wait "$BROKER" || true
	fi
}
trap cleanup EXIT

# conf NAME TOML: a config directory for --config-path, owned by the user.
conf() {
	mkdir -p "$DIR/conf-$1"
	printf '%s\n' "$2" >"$DIR/conf-$1/broker.toml"
	chown -R "$RUN_UID:$RUN_GID" "$DIR/conf-$1"
}
BASE_TOML=$'[sched-fluxion-qmanager]\nqueue-policy = "fcfs"'

# fresh SCENARIO: an empty scenario directory with a 0700 statedir.
fresh() {
	DIR=$WORK/$1
	rm -rf "$DIR"
	"${AS[@]}" mkdir -p "$DIR"
	"${AS[@]}" mkdir -m 0700 "$DIR/state"
	conf base "$BASE_TOML"
}

# start TAG CONF [FLUX-START-ARG...]: start a broker on $DIR/state with
# config $DIR/conf-CONF and wait for its initial program, which stamps
# its start time, counts every job (flux jobs -c 0: the default count is
# 1000) and sleeps until the broker stops it. Sets BROKER and T_UP (flux
# start to initial program, seconds).
start() {
	TAG=$1
	local cf=$2 t0 deadline
	shift 2
	"${AS[@]}" mkdir -m 0700 "$DIR/$TAG.run"
	local ip="date +%s.%N >$DIR/$TAG.ip-start
$FLUX jobs -a -c 0 -n -o {id} | wc -l >$DIR/$TAG.ip-count.tmp
mv $DIR/$TAG.ip-count.tmp $DIR/$TAG.ip-count
exec sleep inf"
	t0=$(now)
	"${AS[@]}" setsid "$FLUX" start --config-path="$DIR/conf-$cf" \
		-Sstatedir="$DIR/state" -Sstatedir-cleanup=0 \
		-Srundir="$DIR/$TAG.run" -Slocal-uri="local://$DIR/local" \
		-Slog-stderr-level=6 "$@" bash -c "$ip" >"$DIR/$TAG.log" 2>&1 &
	BROKER=$!
	deadline=$((SECONDS + 1800))
	until [[ -s $DIR/$TAG.ip-count ]]; do
		if ! kill -0 "$BROKER" 2>/dev/null; then
			wait "$BROKER" || true
			BROKER=
			echo "run.sh: broker $TAG exited before its initial program ran; see $DIR/$TAG.log" >&2
			return 1
		fi
		((SECONDS < deadline)) || {
			echo "run.sh: $TAG: no initial program after 30 min" >&2
			return 1
		}
		sleep 0.2
	done
	T_UP=$(sub "$(cat "$DIR/$TAG.ip-start")" "$t0")
	log "$TAG up in ${T_UP}s, $(cat "$DIR/$TAG.ip-count") jobs"
}

fx() { "${AS[@]}" FLUX_URI="local://$DIR/local" "$FLUX" "$@"; }

# stop: SIGTERM the broker, as the kubelet does a pod's PID 1, and wait
# for it. Sets T_STOP (seconds) and STOP_RC.
stop() {
	local t0
	t0=$(now)
	kill -TERM "$BROKER"
	STOP_RC=0
	wait "$BROKER" || STOP_RC=$?
	T_STOP=$(sub "$(now)" "$t0")
	BROKER=
	log "$TAG stopped in ${T_STOP}s (exit $STOP_RC)"
}

# secs TIME: seconds since midnight of a broker log timestamp (HH:MM:SS.us).
secs() { awk -F: '{printf "%.6f", $1 * 3600 + $2 * 60 + $3}' <<<"$1"; }

# newest_tgz: the newest dump in $DIR/state/dump ("" when none).
newest_tgz() {
	find "$DIR/state/dump" -name '*.tgz' -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -1 | cut -d' ' -f2-
}
# dump_seconds: how long flux dump wrote the newest dump: its birth time
# (flux dump creates it when it starts) to its last modification. rc3's
# "dumping content to" line is no clock: Python's buffered output reaches
# the broker log only when rc3 ends.
dump_seconds() {
	local f
	f=$(newest_tgz)
	if [[ -z $f ]]; then
		echo "?"
		return
	fi
	# shellcheck disable=SC2046 # birth and modification, two words
	sub $(stat -c '%.9Y %.9W' "$f")
}
# rc_seconds LOG N: the broker's own timing of rcN.
rc_seconds() {
	grep -o "rc$2.0: .* Exited ([^)]*) [0-9.]*m\?s" "$1" | awk '{print $NF}' | tail -1
}

bytes() { # PATH...: the total size in bytes (0 when none exists)
	local total=0 f
	for f in "$@"; do
		[[ -e $f ]] && total=$((total + $(stat -c %s "$f")))
	done
	echo "$total"
}
# dump_dir: every entry of $DIR/state/dump with its size (or link target).
dump_dir() {
	find "$DIR/state/dump" -mindepth 1 \( -type l -printf '%f->%l ' \) -o -printf '%f=%s ' 2>/dev/null || true
}
sqlite_bytes() { bytes "$DIR/state/content.sqlite" "$DIR/state/content.sqlite-wal" "$DIR/state/content.sqlite-shm"; }

# jobs_summary: "total=T inactive=I pending=P rc0=R" over every job.
jobs_summary() {
	fx jobs -a -c 0 -n -o '{state} {returncode}' |
		awk '{t++; if ($1 == "INACTIVE") i++; if ($1 == "SCHED" || $1 == "DEPEND" || $1 == "PRIORITY") p++; if ($2 == "0") r++}
		     END {printf "total=%d inactive=%d pending=%d rc0=%d", t, i, p, r}'
}
queue_state() { fx queue status 2>&1 | tr '\n' ' '; }

# submit N: N `true` jobs, then wait until the queue is drained.
submit() {
	local t0 t1 t2
	t0=$(now)
	fx submit --cc="1-$1" --quiet true
	t1=$(now)
	fx queue drain
	t2=$(now)
	record "$SCEN" "submit_${1}_s" "$(sub "$t1" "$t0")"
	record "$SCEN" "drain_${1}_s" "$(sub "$t2" "$t1")"
}

# shutdown_with_dump: SIGTERM a broker started with -Scontent.dump=auto and
# record the figures of item 1.
shutdown_with_dump() {
	stop
	record "$SCEN" term_dump_s "$T_STOP"
	record "$SCEN" term_dump_exit "$STOP_RC"
	record "$SCEN" rc3_s "$(rc_seconds "$DIR/$TAG.log" 3)"
	record "$SCEN" dump_s "$(dump_seconds)"
	record "$SCEN" tgz_bytes "$(bytes "$(newest_tgz)")"
	record "$SCEN" sqlite_bytes_after_dump "$(sqlite_bytes)"
	record "$SCEN" restore_link "$(readlink "$DIR/state/dump/RESTORE" || echo none)"
}

# The base scenario: N jobs, dump, restore, shutdown without a dump, fsck.
base() {
	local n=$1
	SCEN=base-$n
	fresh "$SCEN"
	start a base -Scontent.dump=auto
	record "$SCEN" fresh_start_s "$T_UP"
	submit "$n"
	record "$SCEN" jobs_before "$(jobs_summary)"
	record "$SCEN" sqlite_bytes_running "$(sqlite_bytes)"
	shutdown_with_dump

	start b base -Scontent.restore=auto
	record "$SCEN" restore_start_s "$T_UP"
	record "$SCEN" restore_rc1_s "$(rc_seconds "$DIR/b.log" 1)"
	record "$SCEN" restore_ip_count "$(cat "$DIR/b.ip-count")"
	record "$SCEN" restore_jobs "$(jobs_summary)"
	record "$SCEN" restore_queue "$(queue_state)"
	record "$SCEN" restore_link_after "$(readlink "$DIR/state/dump/RESTORE" || echo none)"
	record "$SCEN" dump_dir_after_restore "$(dump_dir)"
	record "$SCEN" sqlite_bytes_after_restore "$(sqlite_bytes)"
	stop
	record "$SCEN" term_nodump_s "$T_STOP"
	record "$SCEN" term_nodump_exit "$STOP_RC"
	record "$SCEN" rc3_nodump_s "$(rc_seconds "$DIR/b.log" 3)"
	record "$SCEN" sqlite_bytes_after_nodump "$(sqlite_bytes)"

	start c base
	record "$SCEN" fsck_start_s "$T_UP"
	record "$SCEN" fsck_rc1_s "$(rc_seconds "$DIR/c.log" 1)"
	record "$SCEN" fsck_ip_count "$(cat "$DIR/c.ip-count")"
	record "$SCEN" fsck_jobs "$(jobs_summary)"
	record "$SCEN" fsck_queue "$(queue_state)"
	stop
	record "$SCEN" term_nodump2_s "$T_STOP"
	record "$SCEN" sqlite_bytes_end "$(sqlite_bytes)"
}

# N jobs done and 100 more held behind a stopped queue, across a dump.
pending() {
	SCEN=pending
	fresh "$SCEN"
	start a base -Scontent.dump=auto
	submit 1000
	fx queue stop
	fx submit --cc=1-100 --quiet true
	record "$SCEN" jobs_before "$(jobs_summary)"
	record "$SCEN" queue_before "$(queue_state)"
	shutdown_with_dump

	start b base -Scontent.restore=auto
	record "$SCEN" restore_start_s "$T_UP"
	record "$SCEN" restore_ip_count "$(cat "$DIR/b.ip-count")"
	record "$SCEN" restore_jobs "$(jobs_summary)"
	record "$SCEN" restore_queue "$(queue_state)"
	fx queue start
	fx queue drain
	record "$SCEN" after_queue_start_jobs "$(jobs_summary)"
	stop
	record "$SCEN" term_nodump_s "$T_STOP"
}

# A dump SIGKILLed half-way, then a restart that asks for the dump. The
# state is base-N's after its fsck restart: one start with both content
# attributes as a pod would have them (no RESTORE link yet, so rc1 runs
# fsck) measures a full dump of this store; the next restores that dump
# and is SIGTERMed, and its whole session (every process, as a pod's kill
# takes them all) SIGKILLed when half that dump time has passed since its
# .tgz appeared.
kill_dump() {
	local from=$1 half deadline before t0 t1 partial
	SCEN=kill-dump
	DIR=$WORK/$from
	rm -rf "$DIR"/k[123].*
	start k1 base -Scontent.restore=auto -Scontent.dump=auto
	record "$SCEN" k1_start_s "$T_UP"
	shutdown_with_dump
	half=$(grep "^$SCEN dump_s " "$RESULTS" | tail -1 | awk '{print $3 / 2}')

	start k2 base -Scontent.restore=auto -Scontent.dump=auto
	record "$SCEN" k2_restore_start_s "$T_UP"
	record "$SCEN" k2_jobs "$(jobs_summary)"
	before=$(newest_tgz)
	t0=$(now)
	kill -TERM "$BROKER"
	deadline=$((SECONDS + 600))
	while [[ $(newest_tgz) == "$before" ]]; do
		((SECONDS < deadline)) || return 1
		sleep 0.02
	done
	t1=$(now)
	sleep "$half"
	record "$SCEN" killed_after_s "$(sub "$(now)" "$t0") after SIGTERM (the .tgz appeared at $(sub "$t1" "$t0")s, then ${half}s)"
	session_kill
	wait "$BROKER" || true
	BROKER=
	record "$SCEN" dump_dir_after_kill "$(dump_dir)"
	partial=$(newest_tgz)
	if [[ $partial != "$before" ]]; then
		record "$SCEN" partial_tgz "$(basename "$partial") $(stat -c %s "$partial") bytes; tar -tzf: $(tar -tzf "$partial" 2>&1 >/dev/null | tr '\n' ' ' || true)"
	fi
	record "$SCEN" restore_link "$(readlink "$DIR/state/dump/RESTORE" || echo none)"
	record "$SCEN" sqlite_bytes "$(sqlite_bytes)"

	start k3 base -Scontent.restore=auto
	record "$SCEN" restart_s "$T_UP"
	record "$SCEN" restart_ip_count "$(cat "$DIR/k3.ip-count")"
	record "$SCEN" restart_jobs "$(jobs_summary)"
	record "$SCEN" restart_rc1_lines "$(grep -E 'rc1.0: (restoring|Checking|Flux was not)|fsck|lost' "$DIR/k3.log" | sed 's/^.* UTC [0-9]* //' | tr '\n' ';')"
	stop
}

# SIGKILL (no clean shutdown) 15 s after the jobs finish, with or without
# a KVS checkpoint period, then a restart.
ckpt() {
	local mode=$1 toml=$BASE_TOML
	SCEN=ckpt-$mode
	fresh "$SCEN"
	if [[ $mode == on ]]; then
		toml+=$'\n[kvs]\ncheckpoint-period = "10s"'
	fi
	conf ckpt "$toml"
	start a ckpt
	submit 1000
	sleep 15
	session_kill
	wait "$BROKER" || true
	BROKER=
	record "$SCEN" sqlite_bytes_after_kill "$(sqlite_bytes)"
	start b ckpt
	record "$SCEN" restart_s "$T_UP"
	record "$SCEN" restart_ip_count "$(cat "$DIR/b.ip-count")"
	record "$SCEN" restart_jobs "$(jobs_summary)"
	record "$SCEN" restart_rc1_lines "$(grep -E 'rc1.0: |fsck|checkpoint' "$DIR/b.log" | sed 's/^.* UTC [0-9]* //' | tr '\n' ';')"
	stop
}

scenarios=("$@")
if ((${#scenarios[@]} == 0)); then
	scenarios=(base-1000 base-10000 pending kill-dump ckpt-on ckpt-off)
fi
for s in "${scenarios[@]}"; do
	log "=== $s"
	case $s in
	base-*) base "${s#base-}" ;;
	pending) pending ;;
	kill-dump:*) kill_dump "${s#kill-dump:}" ;;
	kill-dump)
		if grep -q '^base-10000 dump_s ' "$RESULTS" 2>/dev/null; then
			kill_dump base-10000
		else
			kill_dump base-1000
		fi
		;;
	ckpt-on) ckpt on ;;
	ckpt-off) ckpt off ;;
	*)
		echo "run.sh: unknown scenario $s" >&2
		exit 2
		;;
	esac
done
