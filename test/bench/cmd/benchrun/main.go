// Command benchrun times jobset-flux against its floor, krm-identity (a KRM
// function from the same SDK that parses the ResourceList and writes it
// back unchanged), on the inputs benchgen writes, and exits non-zero when
// a performance target is missed.
//
// The two binaries run interleaved (floor, function, floor, function...)
// on the same input, so that load from other processes on a shared
// machine falls on both alike; figures are medians, and the targets are
// ratios to the floor. Every output is read back and must hold the
// expected number of flux-installer init containers, ConfigMaps, Secrets
// and broker.toml files, so a function that did nothing could not pass.
//
//	benchrun -fn bin/jobset-flux -floor bin/krm-identity [-dir _out/bench]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/jobset-flux/jobset-flux/test/bench/internal/gen"
	"github.com/jobset-flux/jobset-flux/test/bench/internal/sizes"
	"github.com/jobset-flux/jobset-flux/test/bench/internal/verify"
	"github.com/pelletier/go-toml/v2"
)

// The targets. Each is checked on medians of interleaved runs.
const (
	maxWallRatio    = 1.15 // function wall / floor wall, at 10k resources and more
	wallRatioFrom   = 10000
	maxRSSRatio     = 1.30 // function peak RSS / floor peak RSS, every size
	maxStartRatio   = 1.20 // function / floor on an empty ResourceList
	maxFlatRatio    = 1.50 // function µs/resource at the largest size / at the smallest
	maxRender10k    = 50 * time.Millisecond
	maxBrokerBytes  = 2048
	benchSeedEnvVal = "jobset-flux-bench-seed-0123456789abcdef" // public: benchmark only
)

type options struct {
	fn, floor, dir string
	sizes          []int
	seed           uint64
	runsScale      float64
	keep           bool
	only           map[string]bool
	// memJobSets and memConfigMaps are the list sizes of the memory part.
	memJobSets, memConfigMaps []int
}

func main() {
	var o options
	flag.StringVar(&o.fn, "fn", "bin/jobset-flux", "the function binary")
	flag.StringVar(&o.floor, "floor", "bin/krm-identity", "the floor binary (krm-identity)")
	flag.StringVar(&o.dir, "dir", "_out/bench", "cache directory of inputs (written by benchgen if missing) and outputs")
	list := flag.String("sizes", "1000,10000,50000", "comma-separated numbers of resources")
	flag.Uint64Var(&o.seed, "seed", 1, "random seed of the inputs")
	flag.Float64Var(&o.runsScale, "runs-scale", 1, "multiply the number of timed runs (at least 1 each); below 1 only to try the harness")
	flag.BoolVar(&o.keep, "keep", false, "keep the outputs of the last runs in <dir>/out")
	only := flag.String("only", "startup,mix,jobset,memory", "comma-separated parts to run (startup, mix, jobset, memory); targets of parts not run are not checked")
	memJobSets := flag.String("memory-jobsets", "1000,10000,50000", "sizes of the memory part's lists of Flux JobSets")
	memConfigMaps := flag.String("memory-configmaps", "10000,50000,200000", "sizes of the memory part's lists of ConfigMaps")
	flag.Parse()
	o.only = map[string]bool{}
	for _, part := range strings.Split(*only, ",") {
		switch part = strings.TrimSpace(part); part {
		case "startup", "mix", "jobset", "memory":
			o.only[part] = true
		default:
			fmt.Fprintf(os.Stderr, "benchrun: -only: unknown part %q\n", part)
			os.Exit(2)
		}
	}
	var err error
	if o.sizes, err = sizes.Parse(*list); err != nil {
		fmt.Fprintf(os.Stderr, "benchrun: -sizes: %v\n", err)
		os.Exit(2)
	}
	slices.Sort(o.sizes)
	for _, m := range []struct {
		flag string
		list *string
		out  *[]int
	}{{"-memory-jobsets", memJobSets, &o.memJobSets}, {"-memory-configmaps", memConfigMaps, &o.memConfigMaps}} {
		if *m.out, err = sizes.Parse(*m.list); err != nil {
			fmt.Fprintf(os.Stderr, "benchrun: %s: %v\n", m.flag, err)
			os.Exit(2)
		}
	}
	missed, err := run(o, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchrun: %v\n", err)
		os.Exit(2)
	}
	if missed > 0 {
		fmt.Printf("\n%d target(s) missed\n", missed)
		os.Exit(1)
	}
	fmt.Println("\nall targets met")
}

// sample is one timed run of one binary.
type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
}

// series is the samples of one binary on one input.
type series []sample

func (s series) wall() time.Duration {
	return median(s, func(x sample) time.Duration { return x.wall })
}
func (s series) cpu() time.Duration { return median(s, func(x sample) time.Duration { return x.cpu }) }
func (s series) rss() int64         { return median(s, func(x sample) int64 { return x.rssKiB }) }

func median[T time.Duration | int64](s series, f func(sample) T) T {
	v := make([]T, len(s))
	for i, x := range s {
		v[i] = f(x)
	}
	slices.Sort(v)
	switch {
	case len(v) == 0:
		return 0
	case len(v)%2 == 1:
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// pair is the interleaved samples of the floor and the function on one input.
type pair struct {
	in        gen.Input
	floor, fn series
	// ref is krm-identity writing item by item as the function does
	// (mixes only): no target, the reference for the function's own work.
	ref    series
	broker string // the function's broker.toml (one-JobSet inputs)
}

type runner struct {
	o      options
	outDir string
	env    []string
}

func run(o options, w io.Writer) (missed int, err error) {
	for _, b := range []*string{&o.fn, &o.floor} {
		if *b, err = filepath.Abs(*b); err != nil {
			return 0, err
		}
		if _, err := os.Stat(*b); err != nil {
			return 0, fmt.Errorf("%w (build it with make bench)", err)
		}
	}
	set, err := gen.EnsureAll(o.dir, o.sizes, o.seed, func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "benchrun: "+format+"\n", args...)
	})
	if err != nil {
		return 0, err
	}
	r := &runner{o: o, outDir: filepath.Join(o.dir, "out"),
		env: append(os.Environ(), "JOBSET_FLUX_KEY_SEED="+benchSeedEnvVal)}
	if err := os.MkdirAll(r.outDir, 0o755); err != nil {
		return 0, err
	}
	if !o.keep {
		defer os.RemoveAll(r.outDir)
	}

	load0 := loadavg()
	start := time.Now()
	fmt.Fprintf(w, "jobset-flux benchmark: %s vs floor %s\n", o.fn, o.floor)
	if v, err := exec.Command(o.fn, "version").Output(); err == nil {
		fmt.Fprintf(w, "function: %s\n", strings.TrimSpace(strings.SplitN(string(v), "\n", 2)[0]))
	}
	fmt.Fprintf(w, "machine: %s, %d CPUs, %s; load average at start %s\n", cpuModel(), runtime.NumCPU(), runtime.Version(), load0)
	fmt.Fprintf(w, "runs interleaved floor, [reference,] function, floor, ...; figures are medians; JOBSET_FLUX_KEY_SEED set for all\n\n")

	var startup *pair
	if o.only["startup"] {
		if startup, err = r.pair(set.Empty, r.runs(0), "floor", "fn"); err != nil {
			return 0, err
		}
	}
	var mixes []*pair
	for _, in := range set.Mixes {
		if !o.only["mix"] {
			break
		}
		p, err := r.pair(in, r.runs(in.Manifest.Items), "floor", "ref", "fn")
		if err != nil {
			return 0, err
		}
		mixes = append(mixes, p)
	}
	var shapes []*pair
	for _, in := range set.Shapes {
		if !o.only["jobset"] {
			break
		}
		p, err := r.pair(in, r.runs(1), "floor", "fn")
		if err != nil {
			return 0, err
		}
		shapes = append(shapes, p)
	}

	var mem []*memCase
	if o.only["memory"] {
		if mem, err = r.memory(); err != nil {
			return 0, err
		}
	}

	t := &targets{w: w}
	report(w, startup, mixes, shapes, mem, t)
	fmt.Fprintf(w, "\nload average at end %s; benchmark took %s\n", loadavg(), time.Since(start).Round(time.Second))
	return t.missed, nil
}

// runs is how many timed pairs an input of n items gets: more for small
// inputs, whose times are short and noisier.
func (r *runner) runs(n int) int {
	base := 5
	switch {
	case n <= 1:
		base = 31
	case n <= 2000:
		base = 15
	case n <= 20000:
		base = 7
	}
	return max(1, int(float64(base)*r.o.runsScale+0.5))
}

// pair runs one warm-up of each binary (checked, not timed), then runs
// timed interleaved rounds, checking every output.
func (r *runner) pair(in gen.Input, runs int, binaries ...string) (*pair, error) {
	p := &pair{in: in}
	fmt.Fprintf(os.Stderr, "benchrun: %s: %d interleaved runs of each binary\n", in.Manifest.Name, runs)
	for i := -1; i < runs; i++ {
		for _, which := range binaries {
			s, out, err := r.once(which, in)
			if err != nil {
				return nil, fmt.Errorf("%s on %s: %w", which, in.Manifest.Name, err)
			}
			if i < 0 {
				continue // warm-up: page cache, binary, CPU frequency
			}
			switch which {
			case "floor":
				p.floor = append(p.floor, s)
			case "ref":
				p.ref = append(p.ref, s)
			default:
				p.fn = append(p.fn, s)
				p.broker = out.Broker
			}
		}
	}
	return p, nil
}

// once runs one binary on one input and checks its output.
func (r *runner) once(which string, in gen.Input) (sample, *verify.Output, error) {
	bin, want, env := r.o.fn, in.Manifest.Want(), r.env
	switch which {
	case "floor":
		bin, want = r.o.floor, in.Manifest.Floor()
	case "ref":
		bin, want, env = r.o.floor, in.Manifest.Floor(), append(slices.Clip(r.env), "KRM_IDENTITY_WRITER=items")
	}
	stdin, err := os.Open(in.Path)
	if err != nil {
		return sample{}, nil, err
	}
	defer stdin.Close()
	outPath := filepath.Join(r.outDir, in.Manifest.Name+"."+which+".yaml")
	stdout, err := os.Create(outPath)
	if err != nil {
		return sample{}, nil, err
	}
	defer stdout.Close()
	var stderr strings.Builder
	cmd := exec.Command(bin)
	cmd.Env = env
	// Files, not pipes: the child reads and writes them directly, with no
	// copying goroutine in this process competing for the CPUs.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, &stderr
	t0 := time.Now()
	err = cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return sample{}, nil, fmt.Errorf("%w; stderr:\n%s", err, head(stderr.String(), 20))
	}
	st := cmd.ProcessState
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return sample{}, nil, errors.New("no rusage from the process state")
	}
	s := sample{wall: wall, cpu: st.UserTime() + st.SystemTime(), rssKiB: ru.Maxrss}
	// The inputs are valid: any error or warning means a broken input or
	// a broken function, and its figures would not be comparable.
	if e := stderr.String(); strings.Contains(e, "[error]") || strings.Contains(e, "[warning]") {
		return s, nil, fmt.Errorf("reported errors or warnings:\n%s", head(e, 20))
	}
	out, err := verify.File(outPath)
	if err != nil {
		return s, nil, err
	}
	if err := verify.Check(out.Counts, want); err != nil {
		return s, nil, fmt.Errorf("%s did not do the expected work: %w", outPath, err)
	}
	return s, out, nil
}

func head(s string, lines int) string {
	l := strings.SplitN(s, "\n", lines+1)
	if len(l) > lines {
		l = append(l[:lines], "...")
	}
	return strings.Join(l, "\n")
}

// targets records and prints pass/fail lines.
type targets struct {
	w      io.Writer
	missed int
	lines  []string
}

// note records a figure that is not a target.
func (t *targets) note(format string, args ...any) {
	t.lines = append(t.lines, "  NOTE  "+fmt.Sprintf(format, args...))
}

func (t *targets) check(ok bool, format string, args ...any) {
	verdict := "PASS"
	if !ok {
		verdict = "FAIL"
		t.missed++
	}
	t.lines = append(t.lines, fmt.Sprintf("  %s  %s", verdict, fmt.Sprintf(format, args...)))
}

func report(w io.Writer, startup *pair, mixes, shapes []*pair, mem []*memCase, t *targets) {
	var startFloor, startFn time.Duration
	if startup != nil {
		startFloor, startFn = startup.floor.wall(), startup.fn.wall()
		fmt.Fprintf(w, "Start-up (empty ResourceList, %d runs each)\n", len(startup.fn))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "\tfloor wall\tfn wall\tratio\tfloor cpu\tfn cpu\tratio\tfloor RSS\tfn RSS\tratio\t\n")
		fmt.Fprintf(tw, "\t%s\t%s\t%.2fx\t%s\t%s\t%.2fx\t%s\t%s\t%.2fx\t\n",
			ms(startFloor), ms(startFn), ratio(float64(startFn), float64(startFloor)),
			ms(startup.floor.cpu()), ms(startup.fn.cpu()), ratio(float64(startup.fn.cpu()), float64(startup.floor.cpu())),
			mib(startup.floor.rss()), mib(startup.fn.rss()), ratio(float64(startup.fn.rss()), float64(startup.floor.rss())))
		tw.Flush()
		t.check(float64(startFn) <= maxStartRatio*float64(startFloor),
			"start-up: function %s <= %.2fx floor %s (is %.2fx)", ms(startFn), maxStartRatio, ms(startFloor), ratio(float64(startFn), float64(startFloor)))
	}
	if len(mixes) > 0 {
		reportMixes(w, mixes, startFloor, startFn, t)
	}
	if len(shapes) > 0 {
		reportShapes(w, shapes, t)
	}
	if len(mem) > 0 {
		reportMemory(w, mem, t)
	}
	fmt.Fprintf(w, "\nTargets\n%s\n", strings.Join(t.lines, "\n"))
}

// reportReference compares the function with krm-identity writing item by
// item, as the function does: what the function's own work and its larger
// output cost beyond a cheaper writer. No target applies.
func reportReference(w io.Writer, mixes []*pair) {
	if len(mixes) == 0 || len(mixes[0].ref) == 0 {
		return
	}
	fmt.Fprintf(w, "\nReference, no target: krm-identity writing item by item like the function (KRM_IDENTITY_WRITER=items)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "size\tref wall\tfn wall\tratio\tref cpu\tfn cpu\tratio\tref RSS\tfn RSS\tratio\t\n")
	for _, p := range mixes {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.2fx\t%s\t%s\t%.2fx\t%s\t%s\t%.2fx\t\n", p.in.Manifest.Items,
			sec(p.ref.wall()), sec(p.fn.wall()), ratio(float64(p.fn.wall()), float64(p.ref.wall())),
			sec(p.ref.cpu()), sec(p.fn.cpu()), ratio(float64(p.fn.cpu()), float64(p.ref.cpu())),
			mib(p.ref.rss()), mib(p.fn.rss()), ratio(float64(p.fn.rss()), float64(p.ref.rss())))
	}
	tw.Flush()
}

func reportMixes(w io.Writer, mixes []*pair, startFloor, startFn time.Duration, t *targets) {
	fmt.Fprintf(w, "\nResourceLists (about 10%% Flux JobSets; wall and RSS medians)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "size\tMiB in\tFlux JobSets\truns\tfloor wall\tfn wall\tratio\tfloor cpu\tfn cpu\tratio\tfloor RSS\tfn RSS\tratio\tfloor µs/res\tfn µs/res\t\n")
	perRes := func(s series, startup time.Duration, n int) float64 {
		return float64(s.wall()-startup) / 1e3 / float64(n)
	}
	for _, p := range mixes {
		m := p.in.Manifest
		fw, nw := p.floor.wall(), p.fn.wall()
		fr, nr := p.floor.rss(), p.fn.rss()
		fmt.Fprintf(tw, "%d\t%.1f\t%d\t%d\t%s\t%s\t%.2fx\t%s\t%s\t%.2fx\t%s\t%s\t%.2fx\t%.1f\t%.1f\t\n",
			m.Items, float64(m.Bytes)/(1<<20), m.FluxJobSets, len(p.fn),
			sec(fw), sec(nw), ratio(float64(nw), float64(fw)),
			sec(p.floor.cpu()), sec(p.fn.cpu()), ratio(float64(p.fn.cpu()), float64(p.floor.cpu())),
			mib(fr), mib(nr), ratio(float64(nr), float64(fr)),
			perRes(p.floor, startFloor, m.Items), perRes(p.fn, startFn, m.Items))
		if m.Items >= wallRatioFrom {
			t.check(float64(nw) <= maxWallRatio*float64(fw), "wall at %d: function %s <= %.2fx floor %s (is %.2fx)",
				m.Items, sec(nw), maxWallRatio, sec(fw), ratio(float64(nw), float64(fw)))
		}
		t.check(float64(nr) <= maxRSSRatio*float64(fr), "peak RSS at %d: function %s <= %.2fx floor %s (is %.2fx)",
			m.Items, mib(nr), maxRSSRatio, mib(fr), ratio(float64(nr), float64(fr)))
	}
	tw.Flush()
	fmt.Fprintf(w, "µs/res = (median wall at the size - median start-up wall of the same binary) / resources\n")
	if len(mixes) >= 2 {
		small, large := mixes[0], mixes[len(mixes)-1]
		a := perRes(small.fn, startFn, small.in.Manifest.Items)
		b := perRes(large.fn, startFn, large.in.Manifest.Items)
		fmt.Fprintf(w, "flat per-resource cost: function µs/res at %d <= %.1fx that at %d\n", large.in.Manifest.Items, maxFlatRatio, small.in.Manifest.Items)
		t.check(b <= maxFlatRatio*a, "per-resource cost flat: function %.1f µs/res at %d <= %.1fx %.1f µs/res at %d (is %.2fx)",
			b, large.in.Manifest.Items, maxFlatRatio, a, small.in.Manifest.Items, ratio(b, a))
	}
	reportReference(w, mixes)
}

func reportShapes(w io.Writer, shapes []*pair, t *targets) {
	fmt.Fprintf(w, "\nOne JobSet of 10,000 pods (replicas x completions; end to end, process start included)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "shape\truns\tfloor wall\tfn wall\tfn - floor\tfn cpu\tfn RSS\tbroker.toml\t\n")
	for _, p := range shapes {
		name := strings.TrimPrefix(p.in.Manifest.Name, "jobset-")
		nw := p.fn.wall()
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d B\t\n", name, len(p.fn),
			ms(p.floor.wall()), ms(nw), ms(nw-p.floor.wall()), ms(p.fn.cpu()), mib(p.fn.rss()), len(p.broker))
		t.check(nw < maxRender10k, "10,000-pod JobSet %s renders in %s < %s", name, ms(nw), ms(maxRender10k))
		checkBroker(t, name, p.broker)
	}
	tw.Flush()
}

// checkBroker holds broker.toml to 2 KiB, and its hosts to the fewest RFC
// 29 expressions. An expression has a single bracket, so R Jobs x C pods
// take at least min(R, C) of them, listed in bootstrap.hosts and again in
// resource.config: the file grows with the grid's shorter side, never with
// the pods. Where that side alone is past 2 KiB (100 x 100) the size is
// reported, not counted as missed: no RFC 29 hostlist is shorter.
func checkBroker(t *targets, shape string, broker string) {
	var r, c int
	if _, err := fmt.Sscanf(shape, "%dx%d", &r, &c); err != nil {
		t.check(false, "shape %q: %v", shape, err)
		return
	}
	var config struct {
		Bootstrap struct{ Hosts []struct{ Host string } }
	}
	if err := toml.Unmarshal([]byte(broker), &config); err != nil || len(config.Bootstrap.Hosts) != 1 {
		t.check(false, "10,000-pod JobSet %s: broker.toml with one bootstrap.hosts entry (%v)", shape, err)
		return
	}
	rows := min(r, c)
	got := strings.Count(config.Bootstrap.Hosts[0].Host, "[")
	t.check(got == rows, "10,000-pod JobSet %s: hosts in %d RFC 29 expressions, the fewest possible (min(%d, %d))", shape, got, r, c)
	if len(broker) < maxBrokerBytes || rows == 1 {
		t.check(len(broker) < maxBrokerBytes, "10,000-pod JobSet %s: broker.toml %d B < %d B", shape, len(broker), maxBrokerBytes)
		return
	}
	t.note("10,000-pod JobSet %s: broker.toml %d B, over %d B: %d RFC 29 expressions, twice, cannot be shorter (docs/contributing/performance.md)", shape, len(broker), maxBrokerBytes, rows)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }

func sec(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.0f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func mib(kib int64) string { return fmt.Sprintf("%.0f MiB", float64(kib)/1024) }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
