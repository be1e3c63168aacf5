#!/bin/sh
# Helm 4 runs this as the jobset-flux post-renderer (plugin.yaml) with
# the --post-renderer-args as arguments and the rendered chart on stdin.
# jobset-flux reads flags before input paths, so "-" (stdin) goes last.
exec jobset-flux "$@" -
