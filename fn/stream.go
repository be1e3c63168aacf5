package main

import (
	"io"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// rendered is what one Render of a list gave.
type rendered struct {
	fc        *fn.KubeObject
	results   fn.Results
	inherited int // the results that were in the input
	ok        bool
}

// render runs proc over src into sink.
func render(proc *transform.Processor, src resourcelist.Source, sink resourcelist.Sink) (rendered, error) {
	results, ok, err := proc.Render(src, sink)
	return rendered{fc: src.FunctionConfig(), results: results, inherited: len(src.Results()), ok: ok}, err
}

// renderLazy renders a list read one item at a time
// (resourcelist.ParseLazy): the tree of the whole list is never built.
// done is false when the list must be read whole: nothing has been
// written, and the caller goes on with the same outcome it would have
// had (whatever made the lazy read unsafe, an error in the list
// included, is then read and reported by the whole parse).
func renderLazy(proc *transform.Processor, mem memory, in []byte, stderr io.Writer) (out rendered, sink resourcelist.Sink, done bool) {
	src, err := resourcelist.ParseLazy(in, transform.Keeps)
	if err != nil {
		return out, nil, false
	}
	sink, spooled := mem.sink(len(in), stderr)
	tuneGC(len(in), spooled)
	out, err = render(proc, src, sink)
	if err != nil {
		sink.Release()
		tuneGC(len(in), false)
		return out, nil, false
	}
	return out, sink, true
}
