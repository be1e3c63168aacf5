package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
)

// largeInput is the input size from which the collector runs more often.
// Below it a render's heap stays under a few hundred MiB whatever the
// collector does, and start-up must not pay for collections.
const largeInput = 8 << 20

// largeInputGCPercent is GOGC for a large input. The heap of a render
// only grows until the output is written (the input's tree, then the
// text of every item written so far), so the peak is about
// (1 + GOGC/100) times what is live: 50 instead of Go's 100 cut the peak
// RSS of 10,000 Flux JobSets from 2.3 to 1.7 GB, when every item was
// still a tree, for about a third more CPU (docs/contributing/performance.md,
// "Memory").
const largeInputGCPercent = 50

// tuneGC makes the collector keep the heap closer to what is live when
// the input is large, unless GOGC is set (the user's choice wins).
func tuneGC(inputBytes int) {
	if inputBytes < largeInput {
		return
	}
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(largeInputGCPercent)
}

// streamedGCPercent is GOGC for a list that is streamed and spooled
// (runKRMStream). The collector's work per cycle is the live heap it
// must scan, its pace the heap's growth over what is live. With the
// output text in the heap (read whole, or not spooled) that text is
// scanned for nothing (it holds no pointers) but widens the gap between
// cycles; spooled, it is gone, and what is live is nearly all pointers
// (the stubs, the trees in flight): at 50 the collector ran twice as
// often over the same nodes, and took about 40% of the CPU of 10,000
// Flux JobSets (85.6 s user + sys against 63.2 s read whole). At 100 the
// pace is main's again, for a heap up to twice what is live, which
// there is a fraction of what a list read whole keeps
// (docs/contributing/performance.md, "Memory").
const streamedGCPercent = 100

// tuneStreamedGC sets streamedGCPercent, unless GOGC is set, and
// returns what undoes it: a list that falls back to the whole parse
// holds its tree and text in the heap again.
func tuneStreamedGC() (undo func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	old := debug.SetGCPercent(streamedGCPercent)
	return func() { debug.SetGCPercent(old) }
}

// spoolMinInput is the input size from which the output text is kept in
// a temporary file until it is written (resourcelist.NewSpool) instead of
// memory. Below it the text is at most a few tens of MiB, and a small
// render (a kpt package) should not need a writable temporary directory.
// The tests set it to 0.
var spoolMinInput = largeInput

// newSpool makes the spool; the tests put one that fails in its place.
var newSpool = resourcelist.NewSpool

// spoolFor returns the spool for an input of in's size, or nil: below
// spoolMinInput, or when the temporary directory cannot take a file (a
// read-only container), which is said on stderr; the text then stays in
// memory, as before the spool.
func spoolFor(in []byte, stderr io.Writer) *resourcelist.Spool {
	if len(in) < spoolMinInput {
		return nil
	}
	sp, err := newSpool()
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: keeping the output in memory (%v)\n", err)
		return nil
	}
	return sp
}
