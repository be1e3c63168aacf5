package main

import (
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
