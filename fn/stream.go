package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"

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

// writeList writes the rendered list from sink. written is false when
// that failed, with the exit code to end with (exitProblem): before a
// byte reached stdout (an item that could not be encoded, the spool
// could not be written or read), the list is written with its results
// and an error result that says why, and no items (writeFailed); after,
// only stderr can say it.
func writeList(stdout, stderr io.Writer, sink resourcelist.Sink, out rendered) (code int, written bool) {
	cw := &countingWriter{w: stdout}
	w := bufio.NewWriterSize(cw, 1<<16)
	err := sink.Write(w, out.fc, out.results)
	if err == nil {
		err = w.Flush()
	}
	switch {
	case err == nil:
		return 0, true
	case cw.n == 0:
		return writeFailed(stdout, stderr, out, err), false
	}
	fmt.Fprintf(stderr, "jobset-flux: writing the ResourceList: %v\n", err)
	return exitProblem, false
}

// writeFailed ends a run whose items cannot be written: the
// ResourceList holds the results so far and an error result with err,
// and no items, so that kpt and kustomize, which stop on the exit code,
// show why; it returns exitProblem.
func writeFailed(stdout, stderr io.Writer, out rendered, err error) int {
	msg := "the rendered list could not be written: " + err.Error()
	fmt.Fprintf(stderr, "jobset-flux: %s\n", msg)
	failed := &fn.ResourceList{
		FunctionConfig: out.fc,
		Results:        append(slices.Clip(out.results), &fn.Result{Message: msg, Severity: fn.Error}),
	}
	w := bufio.NewWriterSize(stdout, 1<<16)
	werr := resourcelist.Write(w, failed)
	if werr == nil {
		werr = w.Flush()
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
