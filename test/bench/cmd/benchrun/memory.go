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
// of one kind, large enough that memory, not time, is
// what fails first: every item a Flux JobSet (the most output per input
// byte), or every item a small ConfigMap passed through (the cost of the
// list itself). No time is checked; the target is a ceiling on the
// function's peak RSS against the bytes it reads and writes, which holds
// the figures of docs/performance.md ("Memory"): a change that keeps the
// whole list as trees twice, or joins the output into one more copy,
// misses it.
const (
	// maxMemPerByte bounds peak RSS / (input + output bytes) on the lists
	// of ConfigMaps, which the function passes through: the whole input is
	// parsed into one tree (a ResourceList is one YAML document), so
	// memory follows the input there.
	maxMemPerByte = 12.0
	// maxMemPerInputByteJobSets and maxMemPerItemJobSets bound peak RSS
	// on the lists of Flux JobSets by the input and the number of items,
	// not the output (ten times the input): the output text is spooled
	// to a temporary file and the list streamed (resourcelist.NewSpool,
	// fn/stream.go), so what stays in memory is the input's text and one
	// stub per item (the JobSet and the ConfigMap and Secret made for
	// it). main before the spool (2b567b0) took 51 KiB per item at 10k
	// and 93 KiB at 50k, and misses it.
	maxMemPerInputByteJobSets = 3.0
	maxMemPerItemJobSets      = 16 << 10
	// memSlack is what a process costs before it reads anything (the
	// binary, the runtime, the templates), added to the ceiling.
	memSlack = 96 << 20
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

// memCeiling is the most peak RSS the function may take on c, in KiB.
func memCeiling(c *memCase) int64 {
	m := c.in.Manifest
	if c.kind == "JobSets" {
		return int64(maxMemPerInputByteJobSets*float64(m.Bytes)+float64(maxMemPerItemJobSets*m.Items)+memSlack) >> 10
	}
	return int64(maxMemPerByte*float64(m.Bytes+c.outBytes)+memSlack) >> 10
}

// ceilingText says how c's ceiling is made.
func ceilingText(c *memCase) string {
	if c.kind == "JobSets" {
		return fmt.Sprintf("%.0fx input + %d KiB x items + %d MiB", maxMemPerInputByteJobSets, maxMemPerItemJobSets>>10, memSlack>>20)
	}
	return fmt.Sprintf("%.0fx (input + output) + %d MiB", maxMemPerByte, memSlack>>20)
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
