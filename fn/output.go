package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// writeList writes the rendered list from sink. written is false when
// that failed, with the exit code to end with (exitProblem): before a
// byte reached stdout (an item that could not be encoded, the spool
// could not be written or read), the list is written with its results
// and an error result that says why, and no items (writeFailed); after,
// only stderr can say it.
func writeList(stdout, stderr io.Writer, sink resourcelist.Sink, out rendered) (code int, written bool) {
	cw := &countingWriter{w: stdout}
	err := buffered(cw, func(w io.Writer) error { return sink.Write(w, out.fc, out.results) })
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
	if werr := buffered(stdout, func(w io.Writer) error { return resourcelist.Write(w, failed) }); werr != nil {
		fmt.Fprintf(stderr, "jobset-flux: writing the ResourceList: %v\n", werr)
	}
	return exitProblem
}

// buffered runs write on a buffer in front of w, and flushes it: the
// pieces of the output are small, and stdout takes a system call for
// each write.
func buffered(w io.Writer, write func(io.Writer) error) error {
	b := bufio.NewWriterSize(w, 1<<16)
	if err := write(b); err != nil {
		return err
	}
	return b.Flush()
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

// writeStream writes the items of a standalone render as a plain YAML
// stream, in their order. An item that cannot be encoded fails the run
// before a byte is written, as a write that fails does after.
func writeStream(stdout, stderr io.Writer, items fn.KubeObjects) int {
	if err := buffered(stdout, func(w io.Writer) error { return resourcelist.WriteStream(w, items) }); err != nil {
		fmt.Fprintf(stderr, "jobset-flux: writing stdout: %v\n", err)
		return exitProblem
	}
	return exitOK
}
