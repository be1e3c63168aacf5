package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobset-flux/jobset-flux/test/flux/internal/shim"
)

// container is one running (or finished) container process.
type container struct {
	name    string
	spec    shim.ContainerSpec
	cmd     *exec.Cmd
	log     string
	initPID atomic.Int64 // the container's PID 1, as the host sees it
	done    chan struct{}
	exit    int
}

func (ct *container) pid() int { return int(ct.initPID.Load()) }

// runPod runs one attempt of a pod and returns its phase.
func (c *Cluster) runPod(ctx context.Context, p *Pod) string {
	p.mu.Lock()
	p.attempts++
	attempt := p.attempts
	p.Name = fmt.Sprintf("%s-%05x", p.Hostname, attempt*7919%0xfffff)
	p.phase = "Running"
	p.containers = map[string]*container{}
	p.results = nil
	p.mu.Unlock()
	c.opts.Logf("pod %s (attempt %d): starting", p.Hostname, attempt)
	phase, err := c.runPodAttempt(ctx, p, attempt)
	if err != nil {
		c.opts.Logf("pod %s: %v", p.Hostname, err)
		p.mu.Lock()
		p.results = append(p.results, ContainerResult{Name: "(kubelet)", ExitCode: -1, Log: err.Error()})
		p.mu.Unlock()
		phase = "Failed"
	}
	p.mu.Lock()
	p.phase = phase
	p.mu.Unlock()
	c.opts.Logf("pod %s: %s", p.Hostname, phase)
	return phase
}

func (c *Cluster) runPodAttempt(ctx context.Context, p *Pod, attempt int) (string, error) {
	dir := filepath.Join(c.work, "pods", p.Hostname, strconv.Itoa(attempt))
	if err := os.MkdirAll(filepath.Join(dir, "volumes"), 0o755); err != nil {
		return "", err
	}
	volumes, err := makeVolumes(filepath.Join(dir, "volumes"), p.spec, p.Namespace, c.objs, c.opts.Claims)
	if err != nil {
		return "", err
	}
	var sidecars []*container
	defer func() {
		for _, sc := range sidecars {
			c.terminate(sc)
		}
		for _, sc := range sidecars {
			c.record(p, sc, true)
		}
	}()
	for i := range p.spec.InitContainers {
		spec := &p.spec.InitContainers[i]
		ct, err := c.startContainer(p, dir, spec, volumes)
		if err != nil {
			return "", fmt.Errorf("init container %s: %w", spec.Name, err)
		}
		if spec.RestartPolicy != nil && *spec.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars = append(sidecars, ct) // a native sidecar: runs beside the app containers
			continue
		}
		select {
		case <-ct.done:
		case <-ctx.Done():
			c.terminate(ct)
		}
		c.record(p, ct, true)
		if ct.exit != 0 {
			return "Failed", nil
		}
		if ctx.Err() != nil {
			return "Failed", nil
		}
	}
	var cts []*container
	phase := "Succeeded"
	for i := range p.spec.Containers {
		spec := &p.spec.Containers[i]
		ct, err := c.startContainer(p, dir, spec, volumes)
		if err != nil {
			// kubelet would keep such a container waiting
			// (CreateContainerConfigError) and the pod pending forever; a
			// test wants the failure now, and the other containers still run.
			p.mu.Lock()
			p.results = append(p.results, ContainerResult{Name: spec.Name, ExitCode: -1, Log: err.Error()})
			p.mu.Unlock()
			c.opts.Logf("pod %s: container %s: %v", p.Hostname, spec.Name, err)
			phase = "Failed"
			continue
		}
		cts = append(cts, ct)
	}
	var wg sync.WaitGroup
	for _, ct := range cts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ct.done:
			case <-ctx.Done():
				c.terminate(ct)
			}
		}()
	}
	wg.Wait()
	for _, ct := range cts {
		c.record(p, ct, false)
		if ct.exit != 0 {
			phase = "Failed"
		}
	}
	return phase, nil
}

func (c *Cluster) record(p *Pod, ct *container, init bool) {
	log, _ := os.ReadFile(ct.log)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.results = append(p.results, ContainerResult{Name: ct.name, Init: init, ExitCode: ct.exit, Log: string(log)})
	c.opts.Logf("pod %s: container %s exited %d", p.Hostname, ct.name, ct.exit)
}

// startContainer starts a container: podshim as PID 1 of fresh mount, UTS,
// IPC and PID namespaces inside the pod's network namespace.
func (c *Cluster) startContainer(p *Pod, podDir string, spec *corev1.Container, volumes map[string]hostVolume) (*container, error) {
	s, err := c.containerSpec(p, spec, volumes)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(podDir, "containers", spec.Name)
	s.Root, s.Scratch = filepath.Join(dir, "root"), filepath.Join(dir, "scratch")
	for _, d := range []string{s.Root, s.Scratch} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	specPath := filepath.Join(dir, "spec.json")
	if err := writeJSON(specPath, s); err != nil {
		return nil, err
	}
	ct := &container{name: spec.Name, spec: s, log: filepath.Join(dir, "log"), done: make(chan struct{})}
	logFile, err := os.Create(ct.log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	ct.cmd = exec.Command("nsenter", "--net=/run/netns/"+p.netns, "--",
		"unshare", "--mount", "--uts", "--ipc", "--pid", "--fork", "--kill-child",
		c.opts.Shim, "container", specPath)
	ct.cmd.Stdout, ct.cmd.Stderr = logFile, logFile
	ct.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return nil, errors.New("cluster closed")
	}
	if err := ct.cmd.Start(); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	c.commands[ct.cmd] = true
	c.mu.Unlock()
	c.opts.Logf("pod %s: container %s started: %q", p.Hostname, spec.Name, s.Argv)
	go func() {
		err := ct.cmd.Wait()
		ct.exit = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ct.exit = exitStatus(ee.ProcessState)
		} else if err != nil {
			ct.exit = -1
		}
		c.mu.Lock()
		delete(c.commands, ct.cmd)
		c.mu.Unlock()
		close(ct.done)
	}()
	// unshare forks the container's PID 1: find it, for exec and SIGTERM.
	children := fmt.Sprintf("/proc/%d/task/%d/children", ct.cmd.Process.Pid, ct.cmd.Process.Pid)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(children)
		if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
			pid, _ := strconv.Atoi(f[0])
			ct.initPID.Store(int64(pid))
			break
		}
		select {
		case <-ct.done:
			return ct, nil
		default:
		}
	}
	p.mu.Lock()
	p.containers[spec.Name] = ct
	p.mu.Unlock()
	return ct, nil
}

// terminate stops a container as kubelet does: SIGTERM to its PID 1, then
// SIGKILL after the grace period.
func (c *Cluster) terminate(ct *container) {
	grace := time.After(c.opts.Grace)
	if pid := ct.pid(); pid > 0 && c.awaitCommand(ct, pid, grace) {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	select {
	case <-ct.done:
		return
	case <-grace:
	}
	_ = ct.cmd.Process.Kill() // unshare --kill-child takes the namespace down with it
	<-ct.done
}

// awaitCommand waits until the container's PID 1 is its command rather
// than unshare's child or podshim setting it up, and reports whether it
// is. podshim is a Go program, whose runtime handles SIGTERM: the kernel
// does not shield it as it shields a namespace's init, and it would die
// of the signal, so the command would never see it; unshare's child
// ignores it, and the command would not see it either. kubelet signals
// only started containers.
func (c *Cluster) awaitCommand(ct *container, pid int, grace <-chan time.Time) bool {
	var setup []os.FileInfo
	for _, path := range []string{c.opts.Shim, fmt.Sprintf("/proc/%d/exe", ct.cmd.Process.Pid)} {
		if fi, err := os.Stat(path); err == nil {
			setup = append(setup, fi)
		}
	}
	for {
		// exe, not its path: the shim's pivot_root makes the path
		// meaningless from here.
		exe, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil {
			return false
		}
		if !slices.ContainsFunc(setup, func(fi os.FileInfo) bool { return os.SameFile(fi, exe) }) {
			return true
		}
		select {
		case <-ct.done:
			return false
		case <-grace:
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// containerSpec resolves a container of the pod spec into what podshim
// needs: image, env, command, volume mounts and security context.
func (c *Cluster) containerSpec(p *Pod, spec *corev1.Container, volumes map[string]hostVolume) (shim.ContainerSpec, error) {
	img, ok := c.opts.Images[spec.Image]
	if !ok {
		return shim.ContainerSpec{}, fmt.Errorf("image %q has no stand-in (Options.Images)", spec.Image)
	}
	facts := podFacts{name: p.Name, namespace: p.Namespace, ip: p.IP, hostname: p.Hostname,
		labels: map[string]string{
			"jobset.sigs.k8s.io/jobset-name":           p.JobSet,
			"jobset.sigs.k8s.io/replicatedjob-name":    p.ReplicatedJob,
			"jobset.sigs.k8s.io/job-index":             strconv.Itoa(p.JobIndex),
			"batch.kubernetes.io/job-completion-index": strconv.Itoa(p.Index),
		},
		annotations: map[string]string{"batch.kubernetes.io/job-completion-index": strconv.Itoa(p.Index)},
	}
	// The Job controller gives every pod of an Indexed Job its index.
	withIndex := spec.DeepCopy()
	withIndex.Env = append([]corev1.EnvVar{{Name: "JOB_COMPLETION_INDEX", Value: strconv.Itoa(p.Index)}}, withIndex.Env...)
	env, err := containerEnv(img, withIndex, facts, c.objs)
	if err != nil {
		return shim.ContainerSpec{}, err
	}
	argv, err := command(img, spec, env)
	if err != nil {
		return shim.ContainerSpec{}, err
	}
	s := shim.ContainerSpec{
		Layers: img.Layers, Hostname: p.Hostname, Env: env, Argv: argv, WorkingDir: spec.WorkingDir,
		Files: podFiles(p, c.network().bridge),
	}
	if s.WorkingDir == "" {
		s.WorkingDir = "/"
	}
	for _, m := range spec.VolumeMounts {
		vol, ok := volumes[m.Name]
		if !ok {
			return shim.ContainerSpec{}, fmt.Errorf("volumeMount %s: no volume %q in the pod", m.MountPath, m.Name)
		}
		src := vol.path
		if m.SubPath != "" {
			src = filepath.Join(src, m.SubPath)
		}
		s.Mounts = append(s.Mounts, shim.Mount{Source: src, Target: filepath.Clean(m.MountPath), ReadOnly: m.ReadOnly || vol.readOnly})
	}
	// The pod's security context, overridden field by field by the
	// container's.
	var runAsNonRoot bool
	if psc := p.spec.SecurityContext; psc != nil {
		if psc.RunAsUser != nil {
			s.UID = uint32(*psc.RunAsUser)
		}
		if psc.RunAsGroup != nil {
			s.GID = uint32(*psc.RunAsGroup)
		}
		if psc.RunAsNonRoot != nil {
			runAsNonRoot = *psc.RunAsNonRoot
		}
		if psc.FSGroup != nil {
			s.Groups = append(s.Groups, uint32(*psc.FSGroup))
		}
		for _, g := range psc.SupplementalGroups {
			s.Groups = append(s.Groups, uint32(g))
		}
	}
	if csc := spec.SecurityContext; csc != nil {
		if csc.RunAsUser != nil {
			s.UID = uint32(*csc.RunAsUser)
		}
		if csc.RunAsGroup != nil {
			s.GID = uint32(*csc.RunAsGroup)
		}
		if csc.RunAsNonRoot != nil {
			runAsNonRoot = *csc.RunAsNonRoot
		}
		s.ReadOnlyRoot = csc.ReadOnlyRootFilesystem != nil && *csc.ReadOnlyRootFilesystem
		s.NoNewPrivileges = csc.AllowPrivilegeEscalation != nil && !*csc.AllowPrivilegeEscalation
		if csc.Capabilities != nil {
			s.DropAllCapabilities = slices.Contains(csc.Capabilities.Drop, "ALL")
		}
	}
	s.Groups = append([]uint32{s.GID}, s.Groups...)
	if runAsNonRoot && s.UID == 0 {
		return shim.ContainerSpec{}, errors.New("runAsNonRoot is set and the container would run as root (uid 0)")
	}
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") }) {
		home := "/"
		if s.UID == 0 {
			home = "/root"
		}
		s.Env = append(s.Env, "HOME="+home)
	}
	return s, nil
}

// podFiles are the files kubelet writes into every container of a pod
// (nameserver is cluster DNS):
// /etc/hosts with only the pod's own names, and a resolv.conf whose search
// path makes <hostname>.<subdomain> resolve through cluster DNS.
func podFiles(p *Pod, nameserver string) map[string]string {
	hosts := "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
	if p.Domain != "" {
		hosts += fmt.Sprintf("%s\t%s.%s\t%s\n", p.IP, p.Hostname, p.Domain, p.Hostname)
	} else {
		hosts += fmt.Sprintf("%s\t%s\n", p.IP, p.Hostname)
	}
	domain := p.Domain[strings.Index(p.Domain, ".")+1:] // <ns>.svc.<cluster domain>
	if p.Domain == "" {
		domain = p.Namespace + ".svc.cluster.local"
	}
	_, clusterDomain, _ := strings.Cut(domain, ".svc.")
	resolv := fmt.Sprintf("search %s svc.%s %s\nnameserver %s\noptions ndots:5\n", domain, clusterDomain, clusterDomain, nameserver)
	return map[string]string{
		"/etc/hosts":       hosts,
		"/etc/resolv.conf": resolv,
		"/etc/hostname":    p.Hostname + "\n",
	}
}
