// Command startbench measures how long a Flux JobSet rendered by
// jobset-flux takes to start on the real test cluster (hack/kube), against
// its floor: the same pods without Flux. It is a benchmark, not a test
// (make bench-kube; docs/contributing/startup.md explains the method).
//
// For each pod count it runs, in a fresh namespace under a fresh JobSet
// name each time, one replicatedJob of completions = parallelism = N pods
// of the Debian app image: the Flux variant (annotated, rendered by
// bin/jobset-flux with its defaults) and the floor (the app container's
// own command, not annotated), interleaved, -runs times each, after one
// untimed warm-up run that pulls the images and measures the view copy on
// the node's disk. Every time comes from the cluster or the pods (watch
// events as they arrive, container log timestamps, the tasks' clocks, the
// broker's log), none from a polling interval; the machine is one node,
// so all clocks are the same clock.
//
//	startbench -fn bin/jobset-flux [-sizes 3,8] [-runs 3] [-doc docs/contributing/startup-figures.md]
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

type options struct {
	function, kubectl, kubeconfig, kubeletDir string
	image, dir, doc, keep                     string
	sizes                                     []int
	mounts, anchors                           []string
	ownStart, fail, warmAnchors               bool
	runs                                      int
	timeout                                   time.Duration
}

func main() {
	o, err := parseFlags()
	if err == nil {
		err = bench1(o)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "startbench: %v\n", err)
		os.Exit(1)
	}
}

func parseFlags() (*options, error) {
	o := &options{}
	flag.StringVar(&o.function, "fn", "bin/jobset-flux", "the function binary")
	flag.StringVar(&o.kubectl, "kubectl", os.Getenv("KUBECTL"), "kubectl (default $KUBECTL, else from hack/kube/cluster.sh env)")
	flag.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "the cluster's kubeconfig (default $KUBECONFIG, else from hack/kube/cluster.sh env)")
	flag.StringVar(&o.kubeletDir, "kubelet-pods", "", "the kubelet's pods directory (default: kubelet/pods beside the kubeconfig, as hack/kube lays it out)")
	flag.StringVar(&o.image, "image", defaultAppImage, "the app image")
	flag.StringVar(&o.dir, "dir", "_out/bench-kube", "where render inputs and runs.json go")
	flag.StringVar(&o.doc, "doc", "", "a Markdown file whose startbench block (between <!-- startbench:begin --> and <!-- startbench:end -->) gets the tables")
	list := flag.String("sizes", "3,8", "comma-separated pod counts")
	mounts := flag.String("view-mounts", "copy,image", "the Flux variants: view-mount copy, image, or both")
	anchors := flag.String("anchors", "", "the other tools to run beside: operator, trainer, both or none (their managers must run: hack/anchors/anchors.sh up)")
	flag.BoolVar(&o.ownStart, "flux-own", true, "time Flux's own start (flux start --test-size=N in one pod) too")
	flag.BoolVar(&o.fail, "fail", true, "one more run of each Flux variant and anchor per size whose command exits 3: time to the end, and which end")
	flag.IntVar(&o.runs, "runs", 3, "timed runs per pod count and variant")
	flag.StringVar(&o.keep, "keep", "", "the runs.json of an earlier benchmark whose other pod counts are kept in the tables (to measure some sizes again, or a large one with fewer runs)")
	flag.BoolVar(&o.warmAnchors, "warm-anchors", true, "one untimed run of each anchor first (false when their managers ran the previous benchmark)")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "bound on one run")
	flag.Parse()
	for _, f := range strings.Split(*list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-sizes: %q is not a pod count", f)
		}
		o.sizes = append(o.sizes, n)
	}
	var err error
	if o.mounts, err = parseKinds("view-mounts", *mounts, kindCopy, kindImage); err != nil {
		return nil, err
	}
	if o.anchors, err = parseKinds("anchors", *anchors, kindOperator, kindTrainer); err != nil {
		return nil, err
	}
	if o.runs < 1 {
		return nil, errors.New("-runs must be at least 1")
	}
	if err := o.clusterEnv(); err != nil {
		return nil, err
	}
	if o.kubeletDir == "" {
		o.kubeletDir = filepath.Join(filepath.Dir(o.kubeconfig), "kubelet", "pods")
	}
	return o, nil
}

// clusterEnv fills kubectl and the kubeconfig from hack/kube/cluster.sh
// env when neither flags nor the environment gave them.
func (o *options) clusterEnv() error {
	if o.kubectl != "" && o.kubeconfig != "" {
		return nil
	}
	out, err := exec.Command("bash", "hack/kube/cluster.sh", "env").Output()
	if err != nil {
		return fmt.Errorf("no -kubectl/-kubeconfig and hack/kube/cluster.sh env failed (run from the repository root): %w", err)
	}
	for _, word := range strings.Fields(string(out)) {
		k, v, _ := strings.Cut(word, "=")
		v = strings.Trim(v, `"'`)
		switch {
		case k == "KUBECTL" && o.kubectl == "":
			o.kubectl = v
		case k == "KUBECONFIG" && o.kubeconfig == "":
			o.kubeconfig = v
		}
	}
	if o.kubectl == "" || o.kubeconfig == "" {
		return errors.New("no kubectl or kubeconfig: set KUBECTL and KUBECONFIG (bash hack/kube/cluster.sh env)")
	}
	return nil
}

// bench1 runs everything and prints (and writes) the tables.
func bench1(o *options) error {
	b := &bench{c: &cluster{kubectl: o.kubectl, kubeconfig: o.kubeconfig}, function: o.function,
		image: o.image, dir: o.dir, kubeletDir: o.kubeletDir, stateDir: filepath.Dir(o.kubeconfig), timeout: o.timeout}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if err := b.c.ready(); err != nil {
		return err
	}
	if err := b.c.cleanStale(); err != nil {
		return err
	}
	started := time.Now()
	// The anchors' first runs, untimed: their managers' caches and
	// webhooks warm up as a long-running manager's would have.
	for _, a := range o.anchors {
		if !o.warmAnchors {
			break
		}
		if _, err := b.run(variant{kind: a}, o.sizes[0], 0, false); err != nil {
			return fmt.Errorf("warm-up, %s: %w", a, err)
		}
	}
	runs, warm, err := keptRuns(o.keep, o.sizes)
	if err != nil {
		return err
	}
	done := keptSizes(runs)
	for _, n := range o.sizes {
		got, w, err := b.size(n, o)
		runs = append(runs, got...)
		for m, r := range w {
			warm[warmKey(n, m)] = r
		}
		if err != nil {
			// What finished is still written, marked as partial.
			_ = b.report(o, started, sortedWith(done, n), runs, warm, err)
			return err
		}
		done = append(done, n)
		slices.Sort(done)
		if err := b.report(o, started, done, runs, warm, nil); err != nil {
			return err
		}
	}
	fmt.Print(tables(done, o.kinds(), runs, warm))
	fmt.Fprintf(os.Stderr, "startbench: %d runs in %s\n", len(runs)+len(warm), time.Since(started).Round(time.Second))
	return nil
}

// kinds are the variants' kinds in the tables' order.
func (o *options) kinds() []string { return timedKinds(o.mounts, o.anchors, o.ownStart) }

// size runs one pod count: a warm-up per view-mount mode, then the timed
// runs of every kind, in an order that rotates, then (with -fail) one run
// of each Flux variant whose command exits 3.
func (b *bench) size(n int, o *options) ([]*result, map[string]*result, error) {
	warm := map[string]*result{}
	for _, m := range o.mounts {
		w, err := b.warmUp(n, m)
		if err != nil {
			return nil, warm, err
		}
		warm[m] = w
	}
	var runs []*result
	for rep := 1; rep <= o.runs; rep++ {
		for _, v := range order(o.kinds(), rep) {
			r, err := b.timed(v, n, rep)
			if err != nil {
				return runs, warm, err
			}
			runs = append(runs, r)
		}
	}
	if !o.fail {
		return runs, warm, nil
	}
	for _, k := range append(slices.Clone(o.mounts), o.anchors...) {
		r, err := b.timed(variant{kind: k, fail: true}, n, 1)
		if err != nil {
			return runs, warm, err
		}
		runs = append(runs, r)
	}
	return runs, warm, nil
}

// warmKey keys the warm-up runs by pod count and view-mount mode.
func warmKey(n int, mount string) string { return fmt.Sprintf("%d-%s", n, mount) }

// report writes runs.json and the doc block with the pod counts done so
// far, so that a run that fails later (the cluster taken down under it)
// keeps what it measured.
func (b *bench) report(o *options, started time.Time, sizes []int, runs []*result, warm map[string]*result, failed error) error {
	if err := writeRuns(filepath.Join(o.dir, "runs.json"), runs, warm); err != nil {
		return err
	}
	if o.doc == "" {
		return nil
	}
	body := header(o, started) + tables(sizes, o.kinds(), runs, warm)
	if failed != nil {
		body += fmt.Sprintf("**Partial**: the benchmark stopped with: %s\n\n", strings.ReplaceAll(failed.Error(), "\n", " "))
	}
	return updateDoc(o.doc, body)
}

// warmUp is one untimed Flux run of one view-mount mode that holds its
// pods while it measures what they wrote to the node's disk; it also
// pulls every image the timed runs use.
func (b *bench) warmUp(n int, mount string) (*result, error) {
	t0 := time.Now()
	r, err := b.run(variant{kind: mount}, n, 0, true)
	if err != nil {
		return nil, fmt.Errorf("warm-up, %s, %d pods: %w", mount, n, err)
	}
	fmt.Fprintf(os.Stderr, "startbench: warm-up %s %d pods: all pods Running %.2f s after apply, disk %s (%s in all)\n", mount, n, r.Milestones[msRunning], diskCell(r.Disk), time.Since(t0).Round(time.Second))
	return r, nil
}

func (b *bench) timed(v variant, n, rep int) (*result, error) {
	kind := v.String()
	r, err := b.run(v, n, rep, false)
	if err != nil {
		return nil, fmt.Errorf("%s, %d pods, run %d: %w", kind, n, rep, err)
	}
	fmt.Fprintf(os.Stderr, "startbench: %s %d pods run %d: running %.2f s, first output %.2f s, %s %.2f s (load %.1f)\n",
		kind, n, rep, r.Milestones[msRunning], r.Milestones[msFirstOutput], r.End, r.Milestones[msCompleted], r.Load1)
	return r, nil
}

// keptRuns reads the runs and warm-ups of an earlier runs.json ("" for
// none) whose pod count is not one of sizes: those are measured again.
func keptRuns(path string, sizes []int) ([]*result, map[string]*result, error) {
	warm := map[string]*result{}
	if path == "" {
		return nil, warm, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("-keep: %w", err)
	}
	var old struct {
		Runs   []*result          `json:"runs"`
		WarmUp map[string]*result `json:"warmUp"`
	}
	if err := json.Unmarshal(b, &old); err != nil {
		return nil, nil, fmt.Errorf("-keep %s: %w", path, err)
	}
	var runs []*result
	for _, r := range old.Runs {
		if !slices.Contains(sizes, r.Pods) {
			runs = append(runs, r)
		}
	}
	for k, r := range old.WarmUp {
		if n, _, _ := strings.Cut(k, "-"); !slices.Contains(sizes, atoi(n)) {
			warm[k] = r
		}
	}
	return runs, warm, nil
}

// keptSizes are the pod counts of runs, in order.
func keptSizes(runs []*result) []int {
	var sizes []int
	for _, r := range runs {
		if !slices.Contains(sizes, r.Pods) {
			sizes = append(sizes, r.Pods)
		}
	}
	slices.Sort(sizes)
	return sizes
}

// sortedWith is sizes with n added, in order.
func sortedWith(sizes []int, n int) []int {
	out := append(slices.Clone(sizes), n)
	slices.Sort(out)
	return out
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

func writeRuns(path string, runs []*result, warm map[string]*result) error {
	b, err := marshal(map[string]any{"runs": runs, "warmUp": warm})
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
