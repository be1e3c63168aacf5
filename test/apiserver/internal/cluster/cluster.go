// Package cluster starts a throwaway etcd and kube-apiserver on 127.0.0.1 for
// tests: free ports, a temporary data directory, self-signed serving
// certificates, a static admin token in system:masters, RBAC authorization and
// service-account keys generated on the fly. Stop kills both by PID.
package cluster

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// ErrMissingBinary reports that kube-apiserver or etcd is not there.
var ErrMissingBinary = errors.New("binary missing")

// Options names the binaries to run.
type Options struct {
	KubeAPIServer string // path to kube-apiserver
	Etcd          string // path to etcd
	// ExtraAPIServerFlags are appended to kube-apiserver's command line.
	ExtraAPIServerFlags []string
	// StartTimeout bounds the wait for /readyz (default 60s).
	StartTimeout time.Duration
}

// Cluster is a running etcd + kube-apiserver pair.
type Cluster struct {
	Dir        string        // temporary directory holding data, certs, keys and logs
	URL        string        // https://127.0.0.1:<port>
	Config     *rest.Config  // admin client config (token auth, server cert pinned)
	StartTime  time.Duration // from the first process start to a ready /readyz
	StartCPU   time.Duration // CPU time kube-apiserver used until ready (load-independent)
	etcd       *proc
	apiserver  *proc
	etcdLog    string
	apiLog     string
	keepOnFail bool
}

// Start launches etcd and kube-apiserver and waits until the API server
// reports ready. On error everything already started is stopped again.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	for _, b := range []string{o.KubeAPIServer, o.Etcd} {
		if _, err := os.Stat(b); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMissingBinary, err)
		}
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 60 * time.Second
	}
	dir, err := os.MkdirTemp("", "jobset-flux-apiserver-")
	if err != nil {
		return nil, err
	}
	c = &Cluster{Dir: dir, etcdLog: filepath.Join(dir, "etcd.log"), apiLog: filepath.Join(dir, "kube-apiserver.log")}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, c.Logs(40))
			c.Stop()
			c = nil
		}
	}()

	ports, err := freePorts(3)
	if err != nil {
		return c, err
	}
	etcdClient := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	etcdPeer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	c.URL = fmt.Sprintf("https://127.0.0.1:%d", ports[2])

	token, err := randomHex(24)
	if err != nil {
		return c, err
	}
	tokenFile := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(token+`,admin,admin-uid,"system:masters"`+"\n"), 0o600); err != nil {
		return c, err
	}
	saKey, saPub, err := writeServiceAccountKeys(dir)
	if err != nil {
		return c, err
	}
	certDir := filepath.Join(dir, "certs")

	begin := time.Now()
	c.etcd, err = launch(o.Etcd, c.etcdLog,
		"--name=default",
		"--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdClient,
		"--advertise-client-urls="+etcdClient,
		"--listen-peer-urls="+etcdPeer,
		"--initial-advertise-peer-urls="+etcdPeer,
		"--initial-cluster=default="+etcdPeer,
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	)
	if err != nil {
		return c, fmt.Errorf("start etcd: %w", err)
	}
	args := []string{
		"--etcd-servers=" + etcdClient,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[2]),
		"--cert-dir=" + certDir,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saPub,
		"--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		// Privileged containers must be allowed by the cluster, so that a
		// rejection of one in a restricted namespace is Pod Security's doing.
		"--allow-privileged=true",
		// The "kubernetes" Service's endpoints cannot be a loopback address;
		// nothing here needs them.
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		"--v=1",
	}
	args = append(args, o.ExtraAPIServerFlags...)
	c.apiserver, err = launch(o.KubeAPIServer, c.apiLog, args...)
	if err != nil {
		return c, fmt.Errorf("start kube-apiserver: %w", err)
	}

	if err := c.waitReady(ctx, token, o.StartTimeout); err != nil {
		return c, err
	}
	c.StartTime = time.Since(begin)
	c.StartCPU = cpuTime(c.apiserver.cmd.Process.Pid)

	caFile := filepath.Join(certDir, "apiserver.crt")
	if _, err := os.Stat(caFile); err != nil {
		return c, fmt.Errorf("serving certificate not written to --cert-dir: %w", err)
	}
	c.Config = &rest.Config{
		Host:            c.URL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: caFile},
		QPS:             500,
		Burst:           1000,
		Timeout:         30 * time.Second,
	}
	return c, nil
}

// waitReady polls /readyz until it answers 200, a process exits, or the
// timeout passes.
func (c *Cluster) waitReady(ctx context.Context, token string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The serving certificate does not exist before the server writes it;
	// readiness is probed without verifying it, the client pins it after.
	hc := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // probe of our own child process
	}
	var last string
	for {
		for name, p := range map[string]*proc{"etcd": c.etcd, "kube-apiserver": c.apiserver} {
			if p.exited() {
				return fmt.Errorf("%s exited before the API server was ready", name)
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, failingChecks(string(body)))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready after %s (last: %s)", timeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func failingChecks(body string) string {
	var bad []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "[-]") {
			bad = append(bad, strings.TrimSpace(l))
		}
	}
	if len(bad) == 0 {
		return strings.TrimSpace(body)
	}
	return strings.Join(bad, "; ")
}

// Stop stops kube-apiserver then etcd by PID (SIGTERM, SIGKILL after 10s)
// and removes the temporary directory. Safe to call more than once.
func (c *Cluster) Stop() {
	if c == nil {
		return
	}
	stop(c.apiserver)
	stop(c.etcd)
	c.apiserver, c.etcd = nil, nil
	if c.Dir != "" && !c.keepOnFail {
		os.RemoveAll(c.Dir)
	}
}

// KeepDir leaves the temporary directory (logs, data) in place after Stop.
func (c *Cluster) KeepDir() { c.keepOnFail = true }

// ErrorLogs returns the last n error lines (klog "E" lines) of kube-apiserver's log.
func (c *Cluster) ErrorLogs(n int) string {
	data, err := os.ReadFile(c.apiLog)
	if err != nil {
		return ""
	}
	var errs []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "E") {
			errs = append(errs, l)
		}
	}
	if len(errs) == 0 {
		return ""
	}
	if len(errs) > n {
		errs = errs[len(errs)-n:]
	}
	return fmt.Sprintf("--- last %d error lines of %s ---\n%s\n", len(errs), c.apiLog, strings.Join(errs, "\n"))
}

// cpuTime is the user+system CPU time of a running process, from /proc.
func cpuTime(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name; utime and stime are the
	// 14th and 15th fields of the whole line, in clock ticks (100 Hz).
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / 100)
}

// Logs returns the last n lines of each process's log.
func (c *Cluster) Logs(n int) string {
	var b strings.Builder
	for _, f := range []string{c.etcdLog, c.apiLog} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		fmt.Fprintf(&b, "--- last %d lines of %s ---\n%s\n", len(lines), f, strings.Join(lines, "\n"))
	}
	return b.String()
}

// proc is a started child process; done is closed once it has exited.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// launch starts a binary with its output in logFile. The child gets SIGKILL
// if the test process dies without running cleanup (panic, timeout).
func launch(bin, logFile string, args ...string) (*proc, error) {
	f, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	if p == nil {
		return true
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process by PID, then SIGKILL after 10s.
func stop(p *proc) {
	if p.exited() {
		return
	}
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(pid, syscall.SIGKILL)
		<-p.done
	}
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeServiceAccountKeys writes a fresh ECDSA P-256 signing key and its
// public key, for --service-account-signing-key-file and --service-account-key-file.
func writeServiceAccountKeys(dir string) (keyFile, pubFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", err
	}
	keyFile, pubFile = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	var kb, pb bytes.Buffer
	if err := errors.Join(
		pem.Encode(&kb, &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}),
		pem.Encode(&pb, &pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
	); err != nil {
		return "", "", err
	}
	if err := errors.Join(os.WriteFile(keyFile, kb.Bytes(), 0o600), os.WriteFile(pubFile, pb.Bytes(), 0o644)); err != nil {
		return "", "", err
	}
	return keyFile, pubFile, nil
}
