package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// streaming is whether runKRM tries runKRMStream first; the tests turn
// it off to compare the two paths.
var streaming = true

// streamMinInput is the smallest input streamed. Streaming parses each
// item about one and a half times (its metadata up front, the whole item
// when it is processed), which on a list of objects passed through
// doubles the CPU time (10,000 ConfigMaps: 2.1 -> 5.1 s user) and is
// about 12% more on Flux JobSets. Below this size the whole tree takes
// less than about 900 MiB and time, not memory, is what counts: make
// bench's timed lists (up to 55 MB) and TestLargeResourceList's time
// ratio (96 MB against 9.6 MB) are read whole as before
// (docs/contributing/performance.md, "Memory"). The tests set it to 0.
var streamMinInput = 100 << 20

// streamJobSetsMinInput is the smallest input streamed when it is mostly
// Flux JobSets (fluxShare). There the extra parse costs about 12% of the
// CPU, the output text is spooled, and the input's tree (about 9 times
// its text) is the largest part of memory left; from 8 MiB it is worth
// the CPU (docs/contributing/performance.md, "Memory"). make bench's timed lists are
// about 10% Flux JobSets and stay below 100 MiB: they are read whole.
var streamJobSetsMinInput = largeInput

// streamFor reports whether in is streamed.
func streamFor(in []byte) bool {
	switch {
	case !streaming:
		return false
	case len(in) >= streamMinInput:
		return true
	}
	return len(in) >= streamJobSetsMinInput && fluxShare(in) >= 0.3
}

// fluxShare estimates the share of the list's items that are marked for
// Flux: the lines that carry the Flux annotation over the entries of a
// list in column 0 (the items, as kyaml writes a ResourceList). It only
// chooses between two paths that write the same bytes, so an estimate
// is enough, and it reads the input once, at memory speed.
func fluxShare(in []byte) float64 {
	entries := bytes.Count(in, []byte("\n- "))
	if entries == 0 {
		return 0
	}
	return float64(bytes.Count(in, []byte(settings.EnabledAnnotation+":"))) / float64(entries)
}

// runKRMStream is runKRM for a list whose items can be read one at a
// time (transform.ParseStream): the tree of the whole list is never
// built, so memory follows the largest items and the output text
// (docs/contributing/performance.md, "Memory"). streamed is false when the list must
// be read whole: nothing has been written, and the caller goes on as
// before, with the same outcome it would have had (whatever made the
// split unsafe, an error in the list included, is then read and
// reported by the whole parse).
func runKRMStream(proc *transform.Processor, in []byte, verbose bool, stdout, stderr io.Writer) (code int, streamed bool) {
	if !streamFor(in) {
		return 0, false
	}
	rl, lazy, err := transform.ParseStream(in)
	if err != nil {
		return 0, false
	}
	inherited := len(rl.Results)
	sp := spoolFor(in, stderr)
	undo := func() {}
	if sp != nil {
		undo = tuneStreamedGC()
	}
	ok, compacted, err := proc.ProcessStream(rl, lazy, sp)
	if err != nil {
		undo()
		return 0, false
	}
	if code, written := writeCompacted(stdout, stderr, rl, compacted); !written {
		return code, true
	}
	return reportOutcome(stderr, rl.Results, inherited, verbose, ok, nil), true
}

// writeCompacted sorts rl and writes it with its stubs' pieces from
// compacted. written is false when that failed, with the exit code to
// end with (exitProblem): before a byte reached stdout (an item that
// could not be encoded, the spool could not be written or read), the
// list is written with its results and an error result that says why,
// and no items (writeFailed); after, only stderr can say it.
func writeCompacted(stdout, stderr io.Writer, rl *fn.ResourceList, compacted *resourcelist.Compactor) (code int, written bool) {
	compacted.Sort(rl.Items)
	cw := &countingWriter{w: stdout}
	out := bufio.NewWriterSize(cw, 1<<16)
	err := resourcelist.WriteCompacted(out, rl, compacted)
	if err == nil {
		err = out.Flush()
	}
	switch {
	case err == nil:
		return 0, true
	case cw.n == 0:
		return writeFailed(stdout, stderr, rl, err), false
	}
	fmt.Fprintf(stderr, "jobset-flux: writing the ResourceList: %v\n", err)
	return exitProblem, false
}

// writeFailed ends a run whose items cannot be written (some are stubs,
// or their text is lost): the ResourceList holds the results so far and
// an error result with err, and no items, so that kpt and kustomize,
// which stop on the exit code, show why; it returns exitProblem.
func writeFailed(stdout, stderr io.Writer, rl *fn.ResourceList, err error) int {
	msg := "the rendered list could not be written: " + err.Error()
	fmt.Fprintf(stderr, "jobset-flux: %s\n", msg)
	failed := &fn.ResourceList{
		FunctionConfig: rl.FunctionConfig,
		Results:        append(slices.Clip(rl.Results), &fn.Result{Message: msg, Severity: fn.Error}),
	}
	out := bufio.NewWriterSize(stdout, 1<<16)
	werr := resourcelist.Write(out, failed)
	if werr == nil {
		werr = out.Flush()
	}
	if werr != nil {
		fmt.Fprintf(stderr, "jobset-flux: writing the ResourceList: %v\n", werr)
	}
	return exitProblem
}

// countingWriter counts the bytes that reached w.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
