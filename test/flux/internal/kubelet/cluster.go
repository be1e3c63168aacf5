package kubelet

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Image is what stands in for a container image: the host's root file
// system (its /usr, /etc, /var, /opt, /srv, copy-on-write) with Layers laid
// over top-level directories, plus the image config's ENV, ENTRYPOINT and
// CMD.
type Image struct {
	// Layers maps a top-level directory ("opt") to host directories laid
	// over the host's own, topmost first.
	Layers     map[string][]string
	Env        []string
	Entrypoint []string
	Cmd        []string
}

// DefaultPath is the PATH of a Debian or Ubuntu base image's config.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// HostImage is the host's root file system with the given layers and a
// base image's PATH.
func HostImage(layers map[string][]string) Image {
	return Image{Layers: layers, Env: []string{"PATH=" + DefaultPath}}
}

// Options configure a Cluster.
type Options struct {
	// Shim is the path of the podshim program.
	Shim string
	// Images maps every image reference the pods use to its stand-in; a
	// reference not listed is an error, so a test says what stands in.
	Images map[string]Image
	// Domain is the cluster domain (default cluster.local).
	Domain string
	// Grace bounds how long a terminated container has between SIGTERM and
	// SIGKILL (default 2s; Kubernetes' 30s would only slow the tests).
	Grace time.Duration
	// Logf, if set, receives one line per pod and container event.
	Logf func(format string, args ...any)
	// Held are the hostnames of pods that wait to start until Release:
	// the pods an elastic update adds to a running Job.
	Held []string
	// IPv6 makes the pod network single-stack IPv6, as on an IPv6
	// cluster: each pod's eth0 has a global IPv6 address (and the
	// kernel's link-local one), no IPv4 address, and cluster DNS answers
	// AAAA queries only.
	IPv6 bool
	// Claims maps PersistentVolumeClaim names to the host directories
	// standing in for their bound volumes. A persistentVolumeClaim volume
	// mounts the directory itself, so the pods of a run share it and a
	// later Cluster given the same Claims finds what they wrote: the test
	// owns the directories, and Close leaves them. A claim of a
	// volumeClaimPolicies template is named <template name>-<JobSet name>,
	// as the JobSet controller names it; nothing creates or deletes
	// claims here, so retentionPolicy has no effect. A pod volume naming
	// a claim not listed fails Start.
	Claims map[string]string
}

// Cluster is one run: the network, DNS and pods of some JobSets.
type Cluster struct {
	opts    Options
	objs    Objects
	id      string
	work    string
	netns   string // the cluster network namespace (bridge and DNS)
	dns     *exec.Cmd
	dnsDone chan struct{}

	pods     []*Pod
	jobsets  []*jobSetRun
	cancel   context.CancelFunc
	done     chan struct{}
	closed   atomic.Bool
	mu       sync.Mutex
	commands map[*exec.Cmd]bool // running container processes
}

// Pod is one pod of a JobSet: its identity and, once it ran, its outcome.
type Pod struct {
	JobSet, ReplicatedJob  string
	JobIndex, Index        int
	Name, Hostname, Domain string // Domain: <subdomain>.<namespace>.svc.<cluster domain>, or "" without DNS
	Namespace, IP          string
	spec                   *corev1.PodSpec
	netns                  string

	mu         sync.Mutex
	attempts   int
	phase      string
	containers map[string]*container
	results    []ContainerResult
	// release is closed when a held pod may start; nil when not held.
	release chan struct{}
	// remove ends the running attempt of a pod RemovePod took out of its
	// Job; removed says it was taken out.
	remove  context.CancelFunc
	removed bool
}

// ContainerResult is how one container of a pod's last attempt ended.
type ContainerResult struct {
	Name     string
	Init     bool
	ExitCode int
	Log      string
}

var clusterSeq atomic.Int64

// podNetwork is the pods' address plan of one family.
type podNetwork struct {
	bridge    string // the bridge's address: the pods' gateway and DNS
	subnetLen int
	pod       func(i int) string // pod i's address
	addrFlags []string           // for ip addr add
}

var (
	podNetwork4 = podNetwork{bridge: "10.244.0.1", subnetLen: 16,
		pod: func(i int) string { return fmt.Sprintf("10.244.%d.%d", (i+2)/256, (i+2)%256) }}
	// nodad: the address is usable at once, as CNI plugins make it,
	// instead of after the kernel's duplicate address detection.
	podNetwork6 = podNetwork{bridge: "fd00:244::1", subnetLen: 64, addrFlags: []string{"nodad"},
		pod: func(i int) string { return fmt.Sprintf("fd00:244::%x", i+2) }}
)

// network is the cluster's pod network.
func (c *Cluster) network() podNetwork {
	if c.opts.IPv6 {
		return podNetwork6
	}
	return podNetwork4
}

// Start lays out the network and DNS for every pod of objs' JobSets and
// starts the JobSet and Job controllers, which run the pods. Call Close
// when done, whatever happens.
func Start(opts Options, objs Objects) (*Cluster, error) {
	if opts.Domain == "" {
		opts.Domain = "cluster.local"
	}
	if opts.Grace == 0 {
		opts.Grace = 2 * time.Second
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if len(objs.JobSets) == 0 {
		return nil, errors.New("no JobSet to run")
	}
	sweepStale()
	c := &Cluster{
		opts: opts, objs: objs,
		id:       fmt.Sprintf("jfx-%d-%d", os.Getpid(), clusterSeq.Add(1)),
		done:     make(chan struct{}),
		commands: map[*exec.Cmd]bool{},
	}
	var err error
	if c.work, err = os.MkdirTemp("", c.id+"-"); err != nil {
		return nil, err
	}
	if err := os.Chmod(c.work, 0o755); err != nil {
		return nil, err
	}
	for _, js := range objs.JobSets {
		run, err := newJobSetRun(c, js)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.jobsets = append(c.jobsets, run)
	}
	if len(c.pods) > 60000 {
		c.Close()
		return nil, fmt.Errorf("%d pods do not fit the pod network", len(c.pods))
	}
	if err := c.startNetwork(); err != nil {
		c.Close()
		return nil, fmt.Errorf("network: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	var wg sync.WaitGroup
	for _, run := range c.jobsets {
		wg.Add(1)
		go func() { defer wg.Done(); run.run(ctx) }()
	}
	go func() { wg.Wait(); close(c.done) }()
	return c, nil
}

// Wait blocks until every JobSet has finished (completed or failed) or ctx
// ends; then it stops whatever still runs and returns the outcomes.
func (c *Cluster) Wait(ctx context.Context) ([]JobSetResult, error) {
	var err error
	select {
	case <-c.done:
	case <-ctx.Done():
		err = fmt.Errorf("JobSets still running: %w", ctx.Err())
		c.cancel()
		<-c.done
	}
	var out []JobSetResult
	for _, run := range c.jobsets {
		out = append(out, run.result())
	}
	return out, err
}

// Release lets a held pod start.
func (c *Cluster) Release(hostname string) error {
	p := c.Pod(hostname)
	if p == nil || p.release == nil {
		return fmt.Errorf("no held pod %s", hostname)
	}
	close(p.release)
	return nil
}

// RemovePod takes a running pod out of its Job, as the Job controller does
// with the highest indexes when an elastic update lowers completions: its
// containers get SIGTERM, then SIGKILL after the grace period, and its end
// counts neither as a failure nor as a completion of the Job.
func (c *Cluster) RemovePod(hostname string) error {
	p := c.Pod(hostname)
	if p == nil {
		return fmt.Errorf("no pod %s", hostname)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.remove == nil {
		return fmt.Errorf("pod %s is not running", hostname)
	}
	p.removed = true
	p.remove()
	return nil
}

// Removed reports whether RemovePod took the pod out of its Job.
func (p *Pod) Removed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.removed
}

// Pod finds a pod by hostname.
func (c *Cluster) Pod(hostname string) *Pod {
	for _, p := range c.pods {
		if p.Hostname == hostname {
			return p
		}
	}
	return nil
}

// Pods returns every pod, in JobSet, replicatedJob, job and index order.
func (c *Cluster) Pods() []*Pod { return c.pods }

// Spec returns a copy of the pod's spec as the Job controller creates it:
// the replicatedJob's pod template with the volumes the JobSet controller
// adds for its volumeClaimPolicies, which a test can check.
func (p *Pod) Spec() *corev1.PodSpec { return p.spec.DeepCopy() }

// Results returns the containers of the pod's last attempt, init
// containers first, in spec order.
func (p *Pod) Results() []ContainerResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ContainerResult(nil), p.results...)
}

// Attempts is how many times the pod ran (failed pods are retried while
// the Job's failures stay within backoffLimit).
func (p *Pod) Attempts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.attempts
}

// Phase is Succeeded, Failed, Running, or "" before the pod ran.
func (p *Pod) Phase() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.phase
}

// Result returns the named container's result from the last attempt.
func (p *Pod) Result(name string) (ContainerResult, bool) {
	for _, r := range p.Results() {
		if r.Name == name {
			return r, true
		}
	}
	return ContainerResult{}, false
}

// Exec runs argv in a running container's namespaces, as its user, with
// its spec's environment (kubectl exec).
func (c *Cluster) Exec(ctx context.Context, hostname, containerName string, argv ...string) (out string, exitCode int, err error) {
	p := c.Pod(hostname)
	if p == nil {
		return "", -1, fmt.Errorf("no pod with hostname %s", hostname)
	}
	p.mu.Lock()
	ct := p.containers[containerName]
	p.mu.Unlock()
	if ct == nil || ct.pid() == 0 {
		return "", -1, fmt.Errorf("pod %s: container %s is not running", hostname, containerName)
	}
	args := []string{"--target", strconv.Itoa(ct.pid()), "--mount", "--uts", "--ipc", "--net", "--pid",
		"--setuid", strconv.Itoa(int(ct.spec.UID)), "--setgid", strconv.Itoa(int(ct.spec.GID)), "--",
		"/usr/bin/env", "-i"}
	args = append(args, ct.spec.Env...)
	args = append(args, argv...)
	cmd := exec.CommandContext(ctx, "nsenter", args...)
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(b), exitStatus(ee.ProcessState), nil
	}
	if err != nil {
		return string(b), -1, err
	}
	return string(b), 0, nil
}

// Close stops every process, removes the network namespaces and the work
// directory, and reports anything it could not clean up.
//
// It stops the pods first the way deleting, suspending or preempting the
// JobSet does, so a test can stop an instance with Close and start the
// next on the same Claims: every running container gets SIGTERM at its
// PID 1, once that is the container's command, and SIGKILL after
// Options.Grace (sidecar init containers only once the app containers
// have ended, as kubelet orders them), and Close waits for all of them
// before removing anything. A PID 1 without a SIGTERM handler ignores the
// signal, as in a real container, and is killed. The Claims directories
// are not under the work directory, so they keep what the pods wrote.
// Pods and their results stay readable, and Wait returns at once. A
// JobSet still running when stopped keeps State Running, or may end
// Failed: a container that exits nonzero on SIGTERM fails its pod, which
// can use up the Job's backoffLimit, and the JobSet controller races the
// stop to see that Job fail.
func (c *Cluster) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	if c.cancel != nil {
		c.cancel()
		<-c.done
	}
	c.mu.Lock()
	for cmd := range c.commands {
		_ = cmd.Process.Kill()
	}
	c.mu.Unlock()
	if c.dns != nil {
		_ = c.dns.Process.Kill()
		<-c.dnsDone
	}
	var errs []error
	for _, p := range c.pods {
		if p.netns != "" {
			if err := run("ip", "netns", "del", p.netns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if c.netns != "" {
		if err := run("ip", "netns", "del", c.netns); err != nil {
			errs = append(errs, err)
		}
	}
	if c.work != "" {
		if err := os.RemoveAll(c.work); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.Leftovers(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Leftovers reports network namespaces, processes and mounts of this
// cluster that still exist.
func (c *Cluster) Leftovers() error {
	var found []string
	if entries, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), c.id+"-") || e.Name() == c.id {
				found = append(found, "netns "+e.Name())
			}
		}
	}
	if c.work != "" {
		if mounts, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
			for _, line := range strings.Split(string(mounts), "\n") {
				if strings.Contains(line, c.work) {
					found = append(found, "mount "+line)
				}
			}
		}
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, err := os.ReadFile(p)
			if err == nil && strings.Contains(string(b), c.work) {
				found = append(found, "process "+filepath.Base(filepath.Dir(p))+": "+strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
	}
	if len(found) > 0 {
		return fmt.Errorf("left behind: %s", strings.Join(found, "; "))
	}
	return nil
}

// startNetwork creates the cluster namespace with a bridge and the DNS
// server, and one namespace per pod with eth0 on the bridge. Pods talk over
// the bridge only: nothing is routed to the host's network.
func (c *Cluster) startNetwork() error {
	c.netns = c.id
	pn := c.network()
	addr := func(ns, ip, dev string) []string {
		return append([]string{"ip", "-n", ns, "addr", "add", fmt.Sprintf("%s/%d", ip, pn.subnetLen), "dev", dev}, pn.addrFlags...)
	}
	cmds := [][]string{
		{"ip", "netns", "add", c.netns},
		{"ip", "-n", c.netns, "link", "set", "lo", "up"},
		{"ip", "-n", c.netns, "link", "add", "br0", "type", "bridge"},
		addr(c.netns, pn.bridge, "br0"),
		{"ip", "-n", c.netns, "link", "set", "br0", "up"},
	}
	for i, p := range c.pods {
		p.netns = fmt.Sprintf("%s-p%d", c.id, i)
		p.IP = pn.pod(i)
		veth := fmt.Sprintf("v%d", i)
		cmds = append(cmds,
			[]string{"ip", "netns", "add", p.netns},
			[]string{"ip", "-n", c.netns, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", p.netns},
			[]string{"ip", "-n", c.netns, "link", "set", veth, "master", "br0", "up"},
			addr(p.netns, p.IP, "eth0"),
			[]string{"ip", "-n", p.netns, "link", "set", "eth0", "up"},
			[]string{"ip", "-n", p.netns, "link", "set", "lo", "up"},
			[]string{"ip", "-n", p.netns, "route", "add", "default", "via", pn.bridge},
		)
	}
	for _, cmd := range cmds {
		if err := run(cmd...); err != nil {
			return err
		}
	}
	records := map[string]string{}
	for _, p := range c.pods {
		if p.Domain != "" {
			records[p.Hostname+"."+p.Domain] = p.IP
		}
	}
	path := filepath.Join(c.work, "dns-records.json")
	if err := writeJSON(path, records); err != nil {
		return err
	}
	c.dns = exec.Command("nsenter", "--net=/run/netns/"+c.netns, "--", c.opts.Shim, "dns", net.JoinHostPort(pn.bridge, "53"), path)
	c.dns.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := c.dns.StderrPipe()
	if err != nil {
		return err
	}
	if err := c.dns.Start(); err != nil {
		return err
	}
	c.dnsDone = make(chan struct{})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case ready <- sc.Text():
			default:
			}
			c.opts.Logf("dns: %s", sc.Text())
		}
		_ = c.dns.Wait()
		close(c.dnsDone)
	}()
	select {
	case line := <-ready:
		if !strings.Contains(line, "serving") {
			return fmt.Errorf("DNS server: %s", line)
		}
	case <-time.After(10 * time.Second):
		return errors.New("DNS server did not start within 10s")
	}
	return nil
}

// sweepStale removes network namespaces left by a test process that no
// longer exists (one killed before it could clean up).
func sweepStale() {
	entries, err := os.ReadDir("/run/netns")
	if err != nil {
		return
	}
	for _, e := range entries {
		parts := strings.SplitN(e.Name(), "-", 3)
		if len(parts) < 3 || parts[0] != "jfx" {
			continue
		}
		pid, err := strconv.Atoi(parts[1])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			continue
		}
		_ = run("ip", "netns", "del", e.Name())
	}
}

func run(argv ...string) error {
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
