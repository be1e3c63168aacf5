package resourcelist

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// Policy is the memory policy of a render: which Source reads a list
// and which Sink takes the rendered items, by the input's size. Both
// pairs write the same bytes; they differ in what they hold
// (docs/contributing/memory-layer.md, docs/contributing/performance.md "Memory").
type Policy struct {
	// StreamFrom is the smallest input read lazily (Lazy):
	// a lazy read parses each item about one and a half times (its
	// metadata up front, the whole item when it is taken), so below it
	// the whole tree is small enough that time, not memory, counts.
	StreamFrom int
	// StreamMarkedFrom is the smallest input read lazily when it is
	// mostly items marked with Marker (markedShare): there the input's
	// tree is the largest part of memory left once the output is
	// spooled.
	StreamMarkedFrom int
	// Marker is the annotation whose lines count the marked items (the
	// Flux JobSets).
	Marker string
	// SpoolFrom is the smallest input whose rendered items are encoded
	// as they are done and kept in a temporary file until written
	// (SpoolSink); below it they are kept as trees (MemorySink), and a
	// small render (a kpt package) needs no writable temporary
	// directory.
	SpoolFrom int
	// NewSpool makes the spool's file.
	NewSpool func() (*Spool, error)
}

// largeInput is the input size from which the collector runs more often
// and the output is spooled.
const largeInput = 8 << 20

// DefaultPolicy is the policy of the command; marker is the annotation
// of the items that make a list worth streaming from StreamMarkedFrom.
func DefaultPolicy(marker string) Policy {
	return Policy{
		StreamFrom:       100 << 20,
		StreamMarkedFrom: largeInput,
		Marker:           marker,
		SpoolFrom:        largeInput,
		NewSpool:         NewSpool,
	}
}

// Streams reports whether in is read lazily.
func (m Policy) Streams(in []byte) bool {
	return len(in) >= m.StreamFrom || len(in) >= m.StreamMarkedFrom && m.MarkedShare(in) >= 0.3
}

// MarkedShare estimates the share of the list's items that are marked:
// the lines that carry Marker over the entries of a list in column 0
// (the items, as kyaml writes a ResourceList). It only chooses between
// two pairs that write the same bytes, so an estimate is enough, and it
// reads the input once, at memory speed.
func (m Policy) MarkedShare(in []byte) float64 {
	entries := bytes.Count(in, []byte("\n- "))
	if entries == 0 || m.Marker == "" {
		return 0
	}
	return float64(bytes.Count(in, []byte(m.Marker+":"))) / float64(entries)
}

// sink is the Sink for an input of size bytes, and whether it spools.
// When the temporary directory cannot take a file (a read-only
// container), which is said on stderr, the pieces stay in memory.
func (m Policy) sink(size int, stderr io.Writer) (Sink, bool) {
	if size < m.SpoolFrom {
		return NewMemorySink(), false
	}
	sp, err := m.NewSpool()
	if err != nil {
		fmt.Fprintf(stderr, "jobset-flux: keeping the output in memory (%v)\n", err)
		return NewSpoolSink(nil), false
	}
	return NewSpoolSink(sp), true
}

// NotAList is the error of Render when in is no ResourceList Parse can
// read: its text is Parse's.
type NotAList struct{ Err error }

func (e *NotAList) Error() string { return e.Err.Error() }
func (e *NotAList) Unwrap() error { return e.Err }

// Render calls render over the Source and Sink the policy picks for in,
// whose records keep what keep allows, and returns the sink that holds
// the rendered list. A list it streams is read lazily (ParseLazy); when
// that read or its render fails (ErrUnsafe, or an error in the list,
// which the whole parse then reports), the sink is released, nothing
// has been written, and the list is read whole (Parse) and rendered
// again with the same outcome it would have had. An error is a
// *NotAList, or render's.
func (m Policy) Render(in []byte, keep MetaFilter, stderr io.Writer, render func(Source, Sink) error) (Sink, error) {
	if m.Streams(in) {
		if sink, ok := m.renderLazy(in, keep, stderr, render); ok {
			return sink, nil
		}
	}
	rl, err := Parse(in)
	if err != nil {
		return nil, &NotAList{err}
	}
	sink, _ := m.sink(len(in), stderr)
	if err := render(NewWhole(rl, keep), sink); err != nil {
		sink.Release()
		return nil, err
	}
	return sink, nil
}

// renderLazy renders a list read one item at a time: the tree of the
// whole list is never built. It is false when the list must be read
// whole.
func (m Policy) renderLazy(in []byte, keep MetaFilter, stderr io.Writer, render func(Source, Sink) error) (Sink, bool) {
	src, err := ParseLazy(in, keep)
	if err != nil {
		return nil, false
	}
	sink, spooled := m.sink(len(in), stderr)
	TuneGC(len(in), spooled)
	if err := render(src, sink); err != nil {
		sink.Release()
		TuneGC(len(in), false)
		return nil, false
	}
	return sink, true
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

// TuneGC is the one place the collector is tuned: for an input of size
// bytes, read lazily and spooled or not, unless GOGC is set (the user's
// choice wins). It is called again when a lazy read falls back to the
// whole parse, which holds the tree in the heap again.
func TuneGC(size int, streamedAndSpooled bool) {
	if _, set := os.LookupEnv("GOGC"); set || size < largeInput {
		return
	}
	if streamedAndSpooled {
		debug.SetGCPercent(streamedGCPercent)
		return
	}
	debug.SetGCPercent(largeInputGCPercent)
}
