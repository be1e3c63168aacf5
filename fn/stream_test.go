package main

import (
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/transform"
)

// Issue 19, class 8: the command answers every hostile case of both
// catalogues exactly as before the streaming path (exit code, stdout and
// stderr), whether it streamed the list or fell back to the whole parse,
// and it streams most of them (kyaml-written lists).
func TestStreamCataloguesSameAsWhole(t *testing.T) {
	cases := append(catalogue(t), catalogue19c(t)...)
	streamable := 0
	for _, c := range cases {
		in := c.input(t)
		if _, _, err := transform.ParseStream([]byte(in)); err == nil {
			streamable++
		}
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runFn(t, nil, in)
			streaming = false
			defer func() { streaming = true }()
			wcode, wout, werrs := runFn(t, nil, in)
			if code != wcode || out != wout || errs != werrs {
				t.Errorf("streaming: exit %d, %d bytes, stderr %q\nwhole:     exit %d, %d bytes, stderr %q", code, len(out), errs, wcode, len(wout), werrs)
			}
		})
	}
	if streamable < len(cases)/2 {
		t.Fatalf("only %d of %d cases can be streamed: the test proves little", streamable, len(cases))
	}
	t.Logf("%d of %d cases streamable", streamable, len(cases))
}
