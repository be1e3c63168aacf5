package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
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
// (docs/performance.md, "Memory"). The tests set it to 0.
var streamMinInput = 100 << 20

// runKRMStream is runKRM for a list whose items can be read one at a
// time (transform.ParseStream): the tree of the whole list is never
// built, so memory follows the largest items and the output text
// (docs/performance.md, "Memory"). streamed is false when the list must
// be read whole: nothing has been written, and the caller goes on as
// before, with the same outcome it would have had (whatever made the
// split unsafe, an error in the list included, is then read and
// reported by the whole parse).
func runKRMStream(proc *transform.Processor, in []byte, verbose bool, stdout, stderr io.Writer) (code int, streamed bool) {
	if !streaming || len(in) < streamMinInput {
		return 0, false
	}
	rl, lazy, err := transform.ParseStream(in)
	if err != nil {
		return 0, false
	}
	inherited := len(rl.Results)
	ok, compacted, err := proc.ProcessStream(rl, lazy)
	if err != nil {
		return 0, false
	}
	resourcelist.Sort(rl.Items)
	out := bufio.NewWriterSize(stdout, 1<<16)
	err = resourcelist.WriteCompacted(out, rl, compacted)
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: writing the ResourceList: %v\n", err)
		return exitProblem, true
	}
	return reportOutcome(stderr, rl.Results, inherited, verbose, ok, nil), true
}
