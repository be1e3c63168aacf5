#!/bin/bash
# Test harness for the sandbox tests: lays out one container of a Flux pod
# with bind mounts, then runs a command in it. It must run inside a private
# mount namespace (unshare --mount --propagation private), which takes every
# mount with it when its last process exits, so nothing reaches the host.
#
# Usage: sandbox.sh init|app|mounted COMMAND [ARG...]
# The volumes come from SB_IMAGE (the view image's /opt, init only),
# SB_INSTALL, SB_SOFTWARE, SB_CONFIG, SB_CURVE (app only), SB_LOG (the stub's
# records, at /mnt/stub-log) and SB_WORK (the working directory).
set -euo pipefail

role=$1
shift

# Mounting in the host's namespace would leak; refuse rather than trust the
# caller.
if [[ $(readlink /proc/self/ns/mnt) == "$(readlink /proc/1/ns/mnt)" ]]; then
	echo "sandbox.sh: not in a private mount namespace" >&2
	exit 125
fi

# bind SRC DIR mounts SRC at DIR, creating DIR inside a tmpfs of this
# namespace (never on the host's file system).
bind() {
	mkdir -p -- "$2"
	mount --bind -- "$1" "$2"
}

mount -t tmpfs -o mode=0755 jobset-flux-test /mnt
case ${role} in
init)
	mount --bind -- "${SB_IMAGE:?}" /opt
	bind "${SB_INSTALL:?}" /mnt/flux/install
	bind "${SB_SOFTWARE:?}" /mnt/flux/software
	bind "${SB_CONFIG:?}" /mnt/flux/config
	;;
app)
	mount -t tmpfs -o mode=0755 jobset-flux-test /opt
	bind "${SB_SOFTWARE:?}" /opt/software
	bind "${SB_INSTALL:?}" /mnt/flux/install
	bind "${SB_CONFIG:?}" /mnt/flux/config
	bind "${SB_CURVE:?}" /mnt/flux/curve
	;;
mounted)
	# view-mount: image: the view image's software and views, read-only
	# at their own paths; no software emptyDir.
	mount -t tmpfs -o mode=0755 jobset-flux-test /opt
	bind "${SB_IMAGE:?}/software" /opt/software
	bind "${SB_IMAGE:?}/views" /opt/views
	mount -o remount,bind,ro /opt/software
	mount -o remount,bind,ro /opt/views
	bind "${SB_INSTALL:?}" /mnt/flux/install
	bind "${SB_CONFIG:?}" /mnt/flux/config
	bind "${SB_CURVE:?}" /mnt/flux/curve
	;;
*)
	echo "sandbox.sh: unknown role ${role}" >&2
	exit 125
	;;
esac
bind "${SB_LOG:?}" /mnt/stub-log
bind "${SB_WORK:?}" /mnt/work
cd /mnt/work
# The container sees only the environment the test chose; SB_PATH is its
# PATH, when it must differ from the harness's.
app_path=${SB_PATH-${PATH}}
unset "${!SB_@}"
PATH=${app_path}
exec "$@"
