package main

import (
	"os"
	"runtime/debug"
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
// still a tree, for about a third more CPU (docs/performance.md,
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
