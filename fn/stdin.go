package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
)

// stdinPath is the input path that names stdin, as for cat or kubectl -f:
// the way a post-renderer (Helm's --post-renderer, a Helm 4 plugin) is
// given a plain YAML stream and must print the rendered one.
const stdinPath = "-"

// namesStdin reports whether the paths of a render include stdinPath.
func namesStdin(paths []string) bool {
	return slices.Contains(paths, stdinPath)
}

// runStdinPath renders the plain multi-document YAML stream on stdin as
// a file given by name would be: the same --config, key seed, errors
// and exit codes (runFiles). Without "-", stdin is plain YAML only when
// --config says so (stdinIsPlainYAML), because kustomize and kpt send a
// ResourceList there; "-" says it outright, so a stream of plain objects is never
// read as a ResourceList that is not one. A ResourceList on "-" is
// answered as that list in a file would be, with its own config.
func runStdinPath(proc *transform.Processor, opts options, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(opts.paths) != 1 {
		fmt.Fprintf(stderr, "jobset-flux: %q (stdin) must be the only input, not one of %d; render the files with a separate run, or pipe them all into one\n", stdinPath, len(opts.paths))
		return exitUsage
	}
	in, code := readStdin(stdin, opts, stderr)
	if code >= 0 {
		return code
	}
	if resourcelist.IsResourceList(in) {
		return runList(proc, opts, "on stdin", in, stdout, stderr)
	}
	return runStandalone(proc, opts, in, stdout, stderr)
}

// readStdin reads stdin up to the input limit and tunes the collector to
// its size. The exit code is -1 when the render should go on.
func readStdin(stdin io.Reader, opts options, stderr io.Writer) ([]byte, int) {
	in, err := resourcelist.ReadLimited(stdin, "stdin", opts.maxInput, maxInputHint)
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: %v\n", err)
		if errors.Is(err, resourcelist.ErrTooLarge) {
			return nil, exitUsage
		}
		return nil, exitProblem
	}
	resourcelist.TuneGC(len(in), false)
	return in, -1
}
