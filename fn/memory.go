package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// memory is the command's memory policy: which Source reads a list and
// which Sink takes the rendered items, by the input's size. Both pairs
// write the same bytes; they differ in what they hold
// (docs/contributing/memory-layer.md, docs/contributing/performance.md "Memory").
type memory struct {
	// streamFrom is the smallest input read lazily (resourcelist.Lazy):
	// a lazy read parses each item about one and a half times (its
	// metadata up front, the whole item when it is taken), so below it
	// the whole tree is small enough that time, not memory, counts.
	streamFrom int
	// streamJobSetsFrom is the smallest input read lazily when it is
	// mostly Flux JobSets (fluxShare): there the input's tree is the
	// largest part of memory left once the output is spooled.
	streamJobSetsFrom int
	// spoolFrom is the smallest input whose rendered items are encoded
	// as they are done and kept in a temporary file until written
	// (resourcelist.SpoolSink); below it they are kept as trees
	// (resourcelist.MemorySink), and a small render (a kpt package) needs
	// no writable temporary directory.
	spoolFrom int
	// newSpool makes the spool's file.
	newSpool func() (*resourcelist.Spool, error)
}

// largeInput is the input size from which the collector runs more often
// and the output is spooled.
const largeInput = 8 << 20

// defaultMemory is the policy of the command.
func defaultMemory() memory {
	return memory{
		streamFrom:        100 << 20,
		streamJobSetsFrom: largeInput,
		spoolFrom:         largeInput,
		newSpool:          resourcelist.NewSpool,
	}
}

// streams reports whether in is read lazily.
func (m memory) streams(in []byte) bool {
	return len(in) >= m.streamFrom || len(in) >= m.streamJobSetsFrom && fluxShare(in) >= 0.3
}

// fluxShare estimates the share of the list's items that are marked for
// Flux: the lines that carry the Flux annotation over the entries of a
// list in column 0 (the items, as kyaml writes a ResourceList). It only
// chooses between two pairs that write the same bytes, so an estimate
// is enough, and it reads the input once, at memory speed.
func fluxShare(in []byte) float64 {
	entries := bytes.Count(in, []byte("\n- "))
	if entries == 0 {
		return 0
	}
	return float64(bytes.Count(in, []byte(settings.EnabledAnnotation+":"))) / float64(entries)
}

// sink is the Sink for an input of size bytes, and whether it spools.
// When the temporary directory cannot take a file (a read-only
// container), which is said on stderr, the pieces stay in memory.
func (m memory) sink(size int, stderr io.Writer) (resourcelist.Sink, bool) {
	if size < m.spoolFrom {
		return resourcelist.NewMemorySink(), false
	}
	sp, err := m.newSpool()
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: keeping the output in memory (%v)\n", err)
		return resourcelist.NewSpoolSink(nil), false
	}
	return resourcelist.NewSpoolSink(sp), true
}

// GOGC for a large input, and for one read lazily and spooled.
//
// The heap of a render only grows until the output is written, so its
// peak is about (1 + GOGC/100) times what is live: a large input read
// whole runs the collector more often than Go's default. Read lazily and
// spooled, what is live is nearly all pointers (the records, the trees
// in flight) and the collector's work per cycle is that heap: there
// Go's default pace is kept (docs/contributing/performance.md, "Memory").
const (
	largeInputGCPercent = 50
	streamedGCPercent   = 100
)

// tuneGC is the one place the collector is tuned: for an input of size
// bytes, read lazily and spooled or not, unless GOGC is set (the user's
// choice wins). It is called again when a lazy read falls back to the
// whole parse, which holds the tree in the heap again.
func tuneGC(size int, streamedAndSpooled bool) {
	if _, set := os.LookupEnv("GOGC"); set || size < largeInput {
		return
	}
	if streamedAndSpooled {
		debug.SetGCPercent(streamedGCPercent)
		return
	}
	debug.SetGCPercent(largeInputGCPercent)
}
