package main

import (
	"io"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
)

// Issue 19, class 8: the command answers every hostile case of both
// catalogues exactly as before the streaming path (exit code, stdout and
// stderr), whether it streamed the list or fell back to the whole parse,
// and it streams most of them (kyaml-written lists), here whatever their
// size (resourcelist.Policy.StreamFrom).
func TestStreamCataloguesSameAsWhole(t *testing.T) {
	stream, whole := resourcelist.DefaultPolicy(settings.EnabledAnnotation), resourcelist.DefaultPolicy(settings.EnabledAnnotation)
	stream.StreamFrom = 0
	whole.StreamFrom, whole.StreamMarkedFrom = 1<<40, 1<<40
	cases := append(catalogue(t), brokerCatalogue(t)...)
	streamable := 0
	for _, c := range cases {
		in := c.input(t)
		if _, err := resourcelist.ParseLazy([]byte(in), transform.Keeps); err == nil {
			streamable++
		}
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runFnWith(t, stream, nil, in)
			wcode, wout, werrs := runFnWith(t, whole, nil, in)
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

// TestStreamOnlyLargeInputs: below StreamFrom the list is read whole
// (a list that could be streamed, and is at any size when the threshold
// is 0).
func TestStreamOnlyLargeInputs(t *testing.T) {
	in := []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n")
	mem := resourcelist.DefaultPolicy(settings.EnabledAnnotation)
	if mem.Streams(in) {
		t.Fatal("a small list is streamed")
	}
	mem.StreamFrom = 0
	p, err := transform.New(transform.Options{Seed: []byte(testSeed)})
	if err != nil {
		t.Fatal(err)
	}
	lazy := false
	if _, err := mem.Render(in, transform.Keeps, io.Discard, func(src resourcelist.Source, sink resourcelist.Sink) error {
		_, lazy = src.(*resourcelist.Lazy)
		_, _, err := p.Render(src, sink)
		return err
	}); err != nil || !mem.Streams(in) || !lazy {
		t.Fatalf("not streamed with the threshold at 0 (%v)", err)
	}
}

// TestStreamJobSetLists: a list that is mostly Flux JobSets is streamed
// from StreamMarkedFrom; a list of ConfigMaps, or one like make
// bench's mixes (about 12% of items marked for Flux), only from
// StreamFrom.
func TestStreamJobSetLists(t *testing.T) {
	mem := resourcelist.DefaultPolicy(settings.EnabledAnnotation)
	mem.StreamMarkedFrom = 0
	list := func(flux, other int) []byte {
		s := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
		for range flux {
			s += indentItem(goodJobSet)
		}
		for range other {
			s += indentItem("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n")
		}
		return []byte(s)
	}
	for _, tc := range []struct {
		flux, other int
		want        bool
	}{{3, 0, true}, {1, 1, true}, {0, 4, false}, {1, 8, false}} {
		if got := mem.Streams(list(tc.flux, tc.other)); got != tc.want {
			t.Errorf("%d Flux JobSets, %d ConfigMaps: streamed %v, want %v (share %.2f)", tc.flux, tc.other, got, tc.want, mem.MarkedShare(list(tc.flux, tc.other)))
		}
	}
}
