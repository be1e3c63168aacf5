package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/jobset-flux/jobset-flux/test/bench/internal/gen"
)

// The memory part (issue 19, class 8): one run of the function on lists
// of one kind, large enough that memory, not time, is what fails first:
// every item a Flux JobSet (the most output per input byte), or every
// item a small ConfigMap passed through (the cost of the list itself).
// No time is checked; the target is a ceiling on the function's peak
// RSS, a formula fitted to the figures of docs/contributing/performance.md
// ("Memory") with memMargin over them, that follows the two ways the
// function reads a list (fn/stream.go):
//
//   - streamed and spooled (a list of mostly Flux JobSets from 8 MiB,
//     any list from 100 MiB): memory is the input's text, held while
//     the items are parsed one at a time, and one stub per output item
//     (its metadata, what the sorted output and the results need), not
//     the output, which is in a temporary file: it grows with the
//     items;
//   - read whole (below those sizes): the input's tree and the output
//     text, both in the heap, so memory follows input + output bytes.
//
// main without the spool misses it (f1736a7: 898 to 964 MiB at 10,000
// Flux JobSets against 260), as would a change that holds a streamed
// list's output text in the heap; and main with the spool but stubs as
// trees misses the JobSet ceilings (e5ba2f5: 346 MiB at 10,000 against
// 260, 1,587 at 50,000 against 958), as would stubs that grow back.
const (
	// memMargin is the headroom over the fitted figures: load does not
	// move peak RSS (docs/contributing/performance.md), the collector's timing does,
	// by up to about a fifth between runs of the same binary.
	memMargin = 1.3
	// memFixed is what the function holds whatever the list (the
	// binary, the runtime, the templates, the trees in flight): the
	// intercept of the lists read whole, 168 MiB at 10,000 ConfigMaps
	// and 576 MiB at 50,000.
	memFixed = 66 << 20
	// memPerFluxJobSet and memPerOtherItem are the peak RSS per input
	// item of a streamed list beyond its text and memFixed: a Flux
	// JobSet leaves three stubs and a result, and makes the heap the
	// collector lets grow; an item passed through leaves one stub. With
	// the stream's stubs as records too (docs/contributing/performance.md, "Memory",
	// 9): 4.4 KiB per JobSet at 10,000 and 8.8 KiB at 50,000, 1.8 KiB
	// per ConfigMap at 200,000 (change 8, the compacted stubs as
	// records: 6.0 and 11.6 KiB, 6.2 KiB; trees before: 27 and 29 KiB,
	// and 7.6 KiB).
	memPerFluxJobSet = 9 << 10
	memPerOtherItem  = 2 << 10
	// memPerWholeByte is the peak RSS per byte of input + output of a
	// list read whole (its tree, about nine times its text, and the
	// text): the slope between 10,000 and 50,000 ConfigMaps.
	memPerWholeByte = 8.0
	// memStreamJobSetsFrom and memStreamAllFrom are fn/stream.go's
	// streamJobSetsMinInput and streamMinInput.
	memStreamJobSetsFrom = 8 << 20
	memStreamAllFrom     = 100 << 20
	// memMaxInput raises the function's input limit for these lists
	// (JOBSET_FLUX_MAX_INPUT): 200,000 JobSets are about 360 MB.
	memMaxInput = "1Gi"
)

// memCase is one list of the memory part and the function's run. The
// floor is not run: its one-document writer took about 110 times its input
// on the 50k mix (some 15 GB for 200,000 ConfigMaps), and the target is
// not a ratio to it.
type memCase struct {
	in       gen.Input
	kind     string
	outBytes int64
	fn       sample
}

// memoryInputs makes sure the lists exist: Flux JobSets and ConfigMaps
// at the sizes asked for.
func memoryInputs(o options) ([]gen.Input, error) {
	var inputs []gen.Input
	add := func(name string, write func(io.Writer) (*gen.Manifest, error)) error {
		in, wrote, err := gen.Ensure(o.dir, name, o.seed, write)
		if err != nil {
			return err
		}
		if wrote {
			fmt.Fprintf(os.Stderr, "benchrun: generated %s (%d items, %.1f MiB)\n", in.Path, in.Manifest.Items, float64(in.Manifest.Bytes)/(1<<20))
		}
		inputs = append(inputs, in)
		return nil
	}
	for _, n := range o.memJobSets {
		if err := add(gen.JobSetsName(n), func(w io.Writer) (*gen.Manifest, error) { return gen.JobSets(w, n, o.seed) }); err != nil {
			return nil, err
		}
	}
	for _, n := range o.memConfigMaps {
		if err := add(gen.ConfigMapsName(n), func(w io.Writer) (*gen.Manifest, error) { return gen.ConfigMaps(w, n, o.seed) }); err != nil {
			return nil, err
		}
	}
	return inputs, nil
}

// memory runs the function once on each list (the output is checked as
// for the timed parts).
func (r *runner) memory() ([]*memCase, error) {
	inputs, err := memoryInputs(r.o)
	if err != nil {
		return nil, err
	}
	mr := *r
	mr.env = append(slices.Clip(r.env), "JOBSET_FLUX_MAX_INPUT="+memMaxInput)
	var cases []*memCase
	for _, in := range inputs {
		fmt.Fprintf(os.Stderr, "benchrun: %s: one run of the function, for peak RSS\n", in.Manifest.Name)
		c := &memCase{in: in, kind: "JobSets"}
		if in.Manifest.FluxJobSets == 0 {
			c.kind = "ConfigMaps"
		}
		if c.fn, _, err = mr.once("fn", in); err != nil {
			return nil, fmt.Errorf("fn on %s: %w", in.Manifest.Name, err)
		}
		st, err := os.Stat(filepath.Join(r.outDir, in.Manifest.Name+".fn.yaml"))
		if err != nil {
			return nil, err
		}
		c.outBytes = st.Size()
		cases = append(cases, c)
	}
	return cases, nil
}

// streamed reports whether the function streams and spools c's list
// (every list here is all Flux JobSets or none).
func streamed(c *memCase) bool {
	m := c.in.Manifest
	return m.Bytes >= memStreamAllFrom || m.FluxJobSets > 0 && m.Bytes >= memStreamJobSetsFrom
}

// memCeiling is the most peak RSS the function may take on c, in KiB.
func memCeiling(c *memCase) int64 {
	m := c.in.Manifest
	if streamed(c) {
		other := int64(m.Items - m.FluxJobSets)
		return int64(memMargin*float64(memFixed+m.Bytes+memPerFluxJobSet*int64(m.FluxJobSets)+memPerOtherItem*other)) >> 10
	}
	return int64(memMargin*(memFixed+memPerWholeByte*float64(m.Bytes+c.outBytes))) >> 10
}

// ceilingText says how c's ceiling is made.
func ceilingText(c *memCase) string {
	if streamed(c) {
		return fmt.Sprintf("streamed: %.1fx (%d MiB + input + %d KiB x Flux JobSets + %d KiB x other items)",
			memMargin, memFixed>>20, memPerFluxJobSet>>10, memPerOtherItem>>10)
	}
	return fmt.Sprintf("read whole: %.1fx (%d MiB + %.0fx (input + output))", memMargin, memFixed>>20, memPerWholeByte)
}

func reportMemory(w io.Writer, cases []*memCase, t *targets) {
	fmt.Fprintf(w, "\nMemory (one run each; JOBSET_FLUX_MAX_INPUT=%s; no time target)\n", memMaxInput)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "list\titems\tMiB in\tMiB out\tfn RSS\tfn RSS / (in + out)\tceiling\tfn wall\tfn cpu\t\n")
	for _, c := range cases {
		m := c.in.Manifest
		per := float64(c.fn.rssKiB<<10) / float64(m.Bytes+c.outBytes)
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%s\t%.1f\t%s\t%s\t%s\t\n", c.kind, m.Items,
			float64(m.Bytes)/(1<<20), float64(c.outBytes)/(1<<20), mib(c.fn.rssKiB), per,
			mib(memCeiling(c)), sec(c.fn.wall), sec(c.fn.cpu))
		t.check(c.fn.rssKiB <= memCeiling(c), "peak RSS on %d %s: function %s <= %s = %s (is %.1fx (input + output), %.1f KiB per item)",
			m.Items, c.kind, mib(c.fn.rssKiB), ceilingText(c), mib(memCeiling(c)), per, float64(c.fn.rssKiB)/float64(m.Items))
	}
	tw.Flush()
}
