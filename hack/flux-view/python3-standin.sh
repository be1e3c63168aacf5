#!/bin/sh
# Stand-in for the python3 a Spack view carries in its bin/ (the flux view
# images ship Spack's own python). It runs no Python: it says where it comes
# from, so a job whose PATH reaches the view's python3 instead of its image's
# shows it in its output and fails.
echo "python3 from the Flux view ($0), not the image's" >&2
exit 97
