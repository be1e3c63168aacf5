#!/usr/bin/env bash
# Where the node's CPU goes while a command runs: perf samples every CPU
# (perf record -a) for the command's duration, then this prints CPU-seconds
# per kind of process in each time slice, and per process name over the
# whole run (docs/contributing/startup.md says how to read it).
#
# Usage: hack/kube/cpu-profile/run.sh OUT_DIR COMMAND [ARG...]
#   e.g. hack/kube/cpu-profile/run.sh /tmp/prof _out/bench-kube/startbench \
#          -sizes 32 -runs 1 -view-mounts image -flux-own=false -fail=false
#   SLICE (default 5): seconds per row of the table.
# OUT_DIR gets perf.data, samples.txt (one line per sample: process name,
# pid, time) and report.txt. Needs root and perf (linux-perf).
set -euo pipefail
(($# >= 2)) || { echo "usage: $0 OUT_DIR COMMAND [ARG...]" >&2; exit 2; }
out=$1
shift
command -v perf >/dev/null || { echo "cpu-profile: no perf (apt-get install linux-perf)" >&2; exit 1; }
mkdir -p "$out"
# 97 Hz: not a divisor of the kernel's tick, so samples do not beat with it.
perf record -a -F 97 -o "$out/perf.data" -- "$@" >"$out/command.log" 2>&1 || status=$?
perf script -i "$out/perf.data" -F comm,pid,time >"$out/samples.txt" 2>/dev/null
python3 - "$out/samples.txt" "${SLICE:-5}" <<'PY' | tee "$out/report.txt"
import collections, sys

HZ = 97
# Kinds of process, by name as the kernel shows it (15 characters).
KINDS = [
    ("python", {"python3"}),
    ("flux, rc, entrypoint", None),  # flux*, the entrypoint and the tools it runs
    ("container runtime", {"containerd", "containerd-shim", "runc", "runc:[0:PARENT]", "runc:[1:CHILD]",
                           "runc:[2:INIT]", "exe", "pause", "mount", "umount", "bridge", "host-local",
                           "loopback", "portmap"}),
    ("kubelet", {"kubelet"}),
    ("control plane", {"kube-apiserver", "etcd", "kube-controller", "kube-scheduler", "jobset-controll",
                       "kueue", "coredns"}),
    ("benchmark", {"kubectl", "startbench"}),
]
FLUX_TOOLS = {"entrypoint.sh", "bash", "sh", "readlink", "ln", "cp", "rm", "mkdir", "chmod", "date", "getent"}


def kind(comm):
    if comm == "swapper":
        return "idle"
    for name, comms in KINDS:
        if comms is None:
            if comm.startswith("flux") or comm in FLUX_TOOLS or comm.startswith("01-"):
                return name
        elif comm in comms:
            return name
    return "other"


samples = []
for line in open(sys.argv[1]):
    fields = line.split()
    if len(fields) >= 3:
        samples.append((float(fields[-1].rstrip(":")), " ".join(fields[:-2])))
if not samples:
    sys.exit("cpu-profile: no samples")
step = float(sys.argv[2])
t0 = samples[0][0]
cols = [k for k, _ in KINDS] + ["other", "idle"]
rows = collections.defaultdict(collections.Counter)
names = collections.Counter()
for t, comm in samples:
    rows[int((t - t0) // step)][kind(comm)] += 1
    names[comm] += 1
print("CPU-seconds per %g s from the first sample, by kind of process" % step)
print("| from s | " + " | ".join(cols) + " |")
print("|---" * (len(cols) + 1) + "|")
for r in sorted(rows):
    print("| %g | " % (r * step) + " | ".join("%.2f" % (rows[r][c] / HZ) for c in cols) + " |")
print("\nCPU-seconds per process name over the run (0.5 and more)")
for comm, n in names.most_common():
    if n / HZ >= 0.5:
        print("%-16s %7.2f" % (comm, n / HZ))
PY
exit "${status:-0}"
