package fluxfiles

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/internal/testenv"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
)

// The sandbox tests run the real rendered scripts in a private mount
// namespace where temporary directories are bind-mounted at the pod's paths
// (testdata/sandbox.sh), with testdata/flux standing in for Flux.

const (
	// viewHash and fluxPrefix shape the fake view image like a Spack one.
	viewHash   = "ab12cd34ef56"
	fluxPrefix = "/opt/software/linux-x86_64/flux-core-0.70.0-xyz"
	// certSecret is the Secret's certificate, with the characters Z85 keys
	// bring that a shell would interpret.
	certSecret = "# ZPL certificate (fake)\nmetadata\n    name = \"js\"\ncurve\n    public-key = \"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7\"\n    secret-key = \"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6\"\n"
	// containerPath is the PATH the container starts with.
	containerPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	nonRoot       = 1000
	fsGroup       = 2000
)

// requireSandbox fails (CI) or skips (elsewhere) when the sandbox cannot
// work: it needs root for mounts and the util-linux tools.
func requireSandbox(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "unshare", "setpriv", "stat", "cp", "readlink"} {
		testenv.Tool(t, tool)
	}
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "the sandbox tests need root (for mount namespaces)")
	}
	if out, err := exec.Command("unshare", "--mount", "--propagation", "private", "true").CombinedOutput(); err != nil {
		t.Fatalf("unshare --mount does not work here: %v\n%s", err, out)
	}
}

// pod is the volumes of one Flux pod, as host directories.
type pod struct {
	t                                                    *testing.T
	image, install, software, config, curve, stubs, work string
	// term, when set, is when the container gets SIGTERM, as the
	// kubelet sends it.
	term time.Duration
}

// newPod renders p and lays out a fresh pod: the view image's /opt, empty
// emptyDirs, the ConfigMap, the Secret (certMode, group certGroup) and a
// working directory holding files that globs would match.
func newPod(t *testing.T, p *plan.Plan, certMode os.FileMode, certGroup int) *pod {
	t.Helper()
	f, err := Generate(p)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	root := t.TempDir()
	pd := &pod{t: t}
	for _, d := range []struct {
		path *string
		name string
		mode os.FileMode
	}{
		{&pd.image, "image-opt", 0o755},
		// emptyDirs are world-writable, so that any runAsUser can use them.
		{&pd.install, "flux-install", 0o777},
		{&pd.software, "flux-software", 0o777},
		{&pd.config, "flux-config", 0o755},
		{&pd.curve, "flux-curve", 0o755},
		{&pd.stubs, "stub-log", 0o777},
		{&pd.work, "work", 0o755},
	} {
		*d.path = filepath.Join(root, d.name)
		mkdir(t, *d.path, d.mode)
	}
	pd.buildImage()
	// ConfigMap volume: mode 0555 files.
	for name, text := range f.Map() {
		writeFile(t, filepath.Join(pd.config, name), text, 0o555)
	}
	// Secret volume: the key is a symlink through ..data to a timestamped
	// directory, as kubelet lays it out.
	stamp := "..2026_01_02_03_04_05.000000001"
	mkdir(t, filepath.Join(pd.curve, stamp), 0o755)
	secret := filepath.Join(pd.curve, stamp, plan.CertKey)
	writeFile(t, secret, certSecret, certMode)
	if err := os.Chown(secret, 0, certGroup); err != nil {
		t.Fatal(err)
	}
	symlink(t, stamp, filepath.Join(pd.curve, "..data"))
	symlink(t, "..data/"+plan.CertKey, filepath.Join(pd.curve, plan.CertKey))
	// Files an unquoted *, ? or [a] would expand to.
	for _, name := range []string{"a", "b", "HOME"} {
		writeFile(t, filepath.Join(pd.work, name), "", 0o644)
	}
	return pd
}

// buildImage lays out a flux-view image's /opt: /opt/view -> /opt/views/view
// -> ._view/<hash>, whose entries link into /opt/software.
func (pd *pod) buildImage() {
	t := pd.t
	stub, err := os.ReadFile("testdata/flux")
	if err != nil {
		t.Fatal(err)
	}
	sw := filepath.Join(pd.image, strings.TrimPrefix(fluxPrefix, "/opt/"))
	mkdir(t, filepath.Join(sw, "bin"), 0o755)
	mkdir(t, filepath.Join(sw, "lib/python3.11/site-packages/flux"), 0o755)
	writeFile(t, filepath.Join(sw, "bin/flux"), string(stub), 0o755)
	writeFile(t, filepath.Join(sw, "lib/libflux-core.so.2"), "not really ELF", 0o755)
	// The stub runs flux python on these stand-ins for the bindings.
	site := filepath.Join(sw, "lib/python3.11/site-packages/flux")
	mkdir(t, filepath.Join(site, "resource"), 0o755)
	writeFile(t, filepath.Join(site, "__init__.py"), string(readFile(t, "testdata/pyflux/__init__.py")), 0o644)
	writeFile(t, filepath.Join(site, "resource/__init__.py"), "", 0o644)
	writeFile(t, filepath.Join(site, "resource/journal.py"), string(readFile(t, "testdata/pyflux/journal.py")), 0o644)
	// A mode the default umask would change, to see modes preserved.
	writeFile(t, filepath.Join(sw, "share-writable"), "x", 0o666)
	mkdir(t, filepath.Join(pd.image, "software/.spack-db"), 0o755)
	writeFile(t, filepath.Join(pd.image, "software/.spack-db/index.json"), "{}", 0o644)

	view := filepath.Join(pd.image, "views/._view", viewHash)
	mkdir(t, filepath.Join(view, "bin"), 0o755)
	mkdir(t, filepath.Join(view, "lib/python3.11/site-packages"), 0o755)
	mkdir(t, filepath.Join(view, ".spack"), 0o755)
	writeFile(t, filepath.Join(view, ".spack/projections.yaml"), "all: '{name}'\n", 0o644)
	symlink(t, fluxPrefix+"/bin/flux", filepath.Join(view, "bin/flux"))
	symlink(t, fluxPrefix+"/lib/libflux-core.so.2", filepath.Join(view, "lib/libflux-core.so.2"))
	symlink(t, fluxPrefix+"/lib/python3.11/site-packages/flux", filepath.Join(view, "lib/python3.11/site-packages/flux"))
	symlink(t, "._view/"+viewHash, filepath.Join(pd.image, "views/view"))
	symlink(t, "/opt/views/view", filepath.Join(pd.image, "view"))
}

// result is what one container run left behind.
type result struct {
	code           int
	stderr         string
	start, run     *call
	version        *call
	queue          *call
	cutOff         []*call // flux job raise and flux overlay disconnect
	otherRecording []string
}

// call is one recorded invocation of the stub.
type call struct {
	argv []string
	env  map[string]string
	cert string
}

// runAs runs the container role ("init" or "app") with the given identity
// (nil for root, else setpriv arguments), extra environment and container
// arguments, then collects the stub's records and checks that no mount
// outlived the namespace.
func (pd *pod) runAs(role string, identity []string, env []string, args ...string) result {
	t := pd.t
	t.Helper()
	clearDir(t, pd.stubs)
	harness, err := filepath.Abs("testdata/sandbox.sh")
	if err != nil {
		t.Fatal(err)
	}
	command := plan.EntrypointPath
	if role == "init" {
		command = plan.InitPath
	}
	argv := []string{"--mount", "--propagation", "private", "--", "bash", harness, role}
	if identity != nil {
		argv = append(append(argv, "setpriv"), identity...)
		argv = append(argv, "--")
	}
	argv = append(append(argv, command), args...)
	cmd := exec.Command("unshare", argv...)
	cmd.Env = append([]string{
		"PATH=" + containerPath,
		"HOME=/root",
		"LD_LIBRARY_PATH=/usr/lib/app",
		"PYTHONPATH=/app/python",
		"FLUX_URI=local:///somewhere/else",
		"STUB_LOG=/mnt/stub-log",
		"STUB_CERT=" + plan.CertPath,
		"SB_IMAGE=" + pd.image,
		"SB_INSTALL=" + pd.install,
		"SB_SOFTWARE=" + pd.software,
		"SB_CONFIG=" + pd.config,
		"SB_CURVE=" + pd.curve,
		"SB_LOG=" + pd.stubs,
		"SB_WORK=" + pd.work,
	}, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Start()
	if err == nil && pd.term > 0 {
		timer := time.AfterFunc(pd.term, func() { _ = cmd.Process.Signal(syscall.SIGTERM) })
		defer timer.Stop()
	}
	if err == nil {
		err = cmd.Wait()
	}
	r := result{stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		r.code = exit.ExitCode()
	default:
		t.Fatalf("running %v: %v\n%s", argv, err, r.stderr)
	}
	if r.code == 125 {
		t.Fatalf("the sandbox harness failed:\n%s", r.stderr)
	}
	assertNoMounts(t)
	pd.collect(&r)
	return r
}

func (pd *pod) collect(r *result) {
	t := pd.t
	t.Helper()
	entries, err := os.ReadDir(pd.stubs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".argv")
		if !ok {
			continue
		}
		base := filepath.Join(pd.stubs, name)
		c := &call{argv: splitNUL(readFile(t, base+".argv")), env: map[string]string{}, cert: strings.TrimSpace(string(readFile(t, base+".cert")))}
		for _, kv := range splitNUL(readFile(t, base+".env")) {
			k, v, _ := strings.Cut(kv, "=")
			c.env[k] = v
		}
		switch sub, _, _ := strings.Cut(name, "."); {
		case sub == "start" && r.start == nil:
			r.start = c
		case sub == "run" && r.run == nil:
			r.run = c
		case sub == "version" && r.version == nil:
			r.version = c
		case sub == "queue" && r.queue == nil:
			r.queue = c
		case sub == "job" || sub == "overlay":
			r.cutOff = append(r.cutOff, c)
		default:
			r.otherRecording = append(r.otherRecording, name)
		}
	}
	if len(r.otherRecording) > 0 {
		t.Errorf("unexpected stub invocations %v", r.otherRecording)
	}
}

// assertNoMounts checks that nothing the harness mounted is visible in the
// test's own mount namespace and that no mount point was created on the
// host.
func assertNoMounts(t *testing.T) {
	t.Helper()
	mounts := string(readFile(t, "/proc/self/mountinfo"))
	for _, leak := range []string{"jobset-flux-test", " /mnt/flux", " /opt/software", " /opt/view", " /mnt/stub-log", " /mnt/work"} {
		if strings.Contains(mounts, leak) {
			t.Fatalf("a sandbox mount leaked (%q) into the host's namespace:\n%s", leak, mounts)
		}
	}
	for _, path := range []string{"/mnt/flux", "/mnt/stub-log", "/mnt/work", "/opt/view", "/opt/views", "/opt/software"} {
		if _, err := os.Lstat(path); err == nil {
			t.Fatalf("the sandbox left %s on the host", path)
		}
	}
}

// installView runs the init container as root and checks it succeeded.
func (pd *pod) installView() {
	pd.t.Helper()
	if r := pd.runAs("init", nil, nil); r.code != 0 {
		pd.t.Fatalf("init.sh exited %d:\n%s", r.code, r.stderr)
	}
}

// expectedStart is the flux start argv (without the initial program) the
// entrypoint must produce for p.
func expectedStart(p *plan.Plan) []string {
	argv := []string{"start",
		"-o,--config-path=/mnt/flux/config",
		"-Stbon.connect_timeout=" + p.Settings.ConnectTimeout,
		"-Stbon.topo=" + p.Settings.Topology,
		"-Srundir=/mnt/flux/install/run/rundir",
		"-Slocal-uri=local:///mnt/flux/install/run/local",
		"-Sstatedir=/mnt/flux/install/run/statedir",
	}
	if p.Interactive {
		argv = append(argv, "-Sbroker.rc2_none=1")
	}
	return argv
}

// expectedRun is the flux run argv for p and the user's words.
func expectedRun(p *plan.Plan, user []string) []string {
	argv := []string{"run", "-N", fmt.Sprint(p.JobNodes), "-n", fmt.Sprint(p.Tasks)}
	if p.CoresPerTask > 1 {
		argv = append(argv, "-c", fmt.Sprint(p.CoresPerTask))
	}
	if p.GPUsPerTask > 0 {
		argv = append(argv, "-g", fmt.Sprint(p.GPUsPerTask))
	}
	argv = append(argv, p.Settings.RunOptions...)
	return append(append(argv, "--"), user...)
}

// hostileArgs is a container command whose words break any unquoted or
// re-joined handling.
var hostileArgs = []string{
	"/usr/bin/app", "two words", "it's", `say "hi"`, "$HOME", "${PATH}", "$(id)", "`id`",
	"*", "?", "[a]", `back\slash\\n`, "line1\nline2", "", "-N", "--", "tab\there", "; exit 7",
}

func rankEnv(rank, exit int) []string {
	return []string{fmt.Sprintf("STUB_RANK=%d", rank), fmt.Sprintf("STUB_EXIT=%d", exit)}
}

// checkEnvironment checks what the stub saw of the environment: the
// image's own PATH, LD_LIBRARY_PATH and PYTHONPATH (jobs inherit them), no
// FLUX_URI, and Fluxion's discovery variables only when the view has it.
func checkEnvironment(t *testing.T, c *call, fluxion bool) {
	t.Helper()
	want := map[string]string{
		"PATH":                      containerPath,
		"LD_LIBRARY_PATH":           "/usr/lib/app",
		"PYTHONPATH":                "/app/python",
		"FLUX_URI":                  "<unset>",
		"FLUX_MODULE_PATH_PREPEND":  "<unset>",
		"FLUX_MODPROBE_PATH_APPEND": "<unset>",
		"FLUX_RC_EXTRA":             "<unset>",
	}
	if fluxion {
		want["FLUX_MODULE_PATH_PREPEND"] = plan.ViewDir + "/lib/flux/modules"
		want["FLUX_MODPROBE_PATH_APPEND"] = plan.ViewDir + "/etc/flux/modprobe"
		want["FLUX_RC_EXTRA"] = plan.ViewDir + "/etc/flux"
	}
	for k, v := range want {
		if c.env[k] != v {
			t.Errorf("flux start saw %s=%q, want %q", k, c.env[k], v)
		}
	}
}

func TestSandboxInit(t *testing.T) {
	requireSandbox(t)
	for _, tc := range []struct {
		name     string
		identity []string
		uid      int
	}{
		{"root", nil, 0},
		{"non-root without CAP_CHOWN", []string{"--reuid", fmt.Sprint(nonRoot), "--regid", fmt.Sprint(nonRoot), "--clear-groups"}, nonRoot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pd := newPod(t, newPlan([]group{{"w", 1, 1, "js-w-0-0"}}, nil), 0o444, 0)
			for run := 1; run <= 2; run++ { // the second run is a restart
				if run == 2 {
					// A newer image: the restart must pick up its content.
					writeFile(t, filepath.Join(pd.image, "views/._view", viewHash, "added"), "new", 0o644)
				}
				r := pd.runAs("init", tc.identity, nil)
				if r.code != 0 {
					t.Fatalf("run %d: init.sh exited %d:\n%s", run, r.code, r.stderr)
				}
				checkLog(t, r.stderr, "flux-installer: ", "done")
				want := []string{".spack", "bin", "lib"}
				if run == 2 {
					want = []string{".spack", "added", "bin", "lib"}
				}
				pd.checkInstalled(tc.uid, want)
				pd.checkTimes()
			}
			if _, err := os.Stat(filepath.Join(pd.install, "view/added")); err != nil {
				t.Errorf("the restart did not replace the view: %v", err)
			}
		})
	}
}

// checkTimes checks that the software copy kept the image's modification
// times: Python compares its cached bytecode with the source's.
func (pd *pod) checkTimes() {
	t := pd.t
	t.Helper()
	rel := strings.TrimPrefix(fluxPrefix, "/opt/")
	for _, path := range []string{"lib/python3.11/site-packages/flux/__init__.py", "bin/flux", "lib/python3.11/site-packages/flux"} {
		src, err := os.Lstat(filepath.Join(pd.image, rel, path))
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Lstat(filepath.Join(pd.software, strings.TrimPrefix(rel, "software/"), path))
		if err != nil {
			t.Errorf("software copy: %v", err)
			continue
		}
		if !dst.ModTime().Equal(src.ModTime()) {
			t.Errorf("the copy of %s has time %v, want the image's %v", path, dst.ModTime(), src.ModTime())
		}
	}
}

// checkInstalled checks the init container's copies.
func (pd *pod) checkInstalled(uid int, want []string) {
	t := pd.t
	t.Helper()
	view := filepath.Join(pd.install, "view")
	if fi, err := os.Lstat(view); err != nil || !fi.IsDir() {
		t.Fatalf("%s is not a directory: %v", plan.ViewDir, err)
	}
	if names := dirNames(t, view); !slices.Equal(names, want) {
		t.Errorf("view holds %v, want %v (a nested copy means a re-run nested instead of replacing)", names, want)
	}
	for _, link := range []string{"bin/flux", "lib/libflux-core.so.2", "lib/python3.11/site-packages/flux"} {
		target, err := os.Readlink(filepath.Join(view, link))
		if err != nil {
			t.Errorf("view/%s is not a symlink: %v", link, err)
			continue
		}
		if !strings.HasPrefix(target, fluxPrefix+"/") {
			t.Errorf("view/%s -> %s, want a link into %s", link, target, fluxPrefix)
		}
		// Resolve as the app container would, with /opt/software mounted
		// from the software volume.
		onHost := filepath.Join(pd.software, strings.TrimPrefix(target, plan.SoftwareDir+"/"))
		if _, err := os.Stat(onHost); err != nil {
			t.Errorf("view/%s does not resolve into the software copy: %v", link, err)
		}
	}
	if got := dirNames(t, pd.install); !slices.Equal(got, []string{"view"}) {
		t.Errorf("install volume holds %v, want only view (no temporary copies)", got)
	}
	if got := dirNames(t, pd.software); !slices.Equal(got, []string{".spack-db", "linux-x86_64"}) {
		t.Errorf("software volume holds %v, want .spack-db and linux-x86_64", got)
	}
	sw := filepath.Join(pd.software, "linux-x86_64", filepath.Base(fluxPrefix))
	for path, mode := range map[string]os.FileMode{"bin/flux": 0o755, "share-writable": 0o666, "lib/python3.11/site-packages/flux/__init__.py": 0o644} {
		fi, err := os.Lstat(filepath.Join(sw, path))
		if err != nil {
			t.Errorf("software copy: %v", err)
			continue
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("software copy of %s has mode %v, want %v (modes preserved)", path, fi.Mode().Perm(), mode)
		}
		if owner := int(fi.Sys().(*syscall.Stat_t).Uid); owner != uid {
			t.Errorf("software copy of %s is owned by uid %d, want the init container's uid %d", path, owner, uid)
		}
	}
}

func TestSandboxInitWithoutView(t *testing.T) {
	requireSandbox(t)
	pd := newPod(t, newPlan([]group{{"w", 1, 1, "js-w-0-0"}}, nil), 0o444, 0)
	if err := os.Remove(filepath.Join(pd.image, "view")); err != nil {
		t.Fatal(err)
	}
	r := pd.runAs("init", nil, nil)
	if r.code == 0 {
		t.Fatalf("init.sh succeeded without a view:\n%s", r.stderr)
	}
	checkLog(t, r.stderr, "flux-installer: ", "no Flux view at /opt/view: view-image must be a flux-view image")
}

// TestSandboxLeader runs rank 0 of every variant with a hostile command.
func TestSandboxLeader(t *testing.T) {
	requireSandbox(t)
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			p := v.plan
			if p.Settings.Launcher {
				t.Skip("the launcher runs the command itself: TestSandboxLauncher")
			}
			if p.ImageFlux {
				t.Skip("the sandbox installs a view; the image's own Flux runs in test/flux TestImageFlux")
			}
			pd := newPod(t, p, 0o444, 0)
			pd.installView()
			r := pd.runAs("app", nil, rankEnv(0, 0), hostileArgs...)
			if r.code != 0 {
				t.Fatalf("entrypoint exited %d:\n%s", r.code, r.stderr)
			}
			if r.start == nil {
				t.Fatalf("flux start never ran:\n%s", r.stderr)
			}
			checkEnvironment(t, r.start, false)
			if r.start.cert != "400 0" {
				t.Errorf("at flux start the certificate copy was %q, want mode 400 owned by uid 0", r.start.cert)
			}
			start := expectedStart(p)
			if p.Interactive {
				if !slices.Equal(r.start.argv, start) {
					t.Errorf("flux start argv\n got %q\nwant %q", r.start.argv, start)
				}
				if r.run != nil {
					t.Errorf("interactive mode ran flux run %q", r.run.argv)
				}
				checkLog(t, r.stderr, "jobset-flux: ", "ignoring the container's command")
				return
			}
			run := expectedRun(p, hostileArgs)
			argv := r.start.argv
			if p.Settings.Queues {
				// The queues are started in front of the program
				// (TestSandboxQueues runs it).
				argv = withoutQueueStart(t, argv, len(start))
			}
			if p.Settings.InfraRestarts > 0 {
				// The command runs through the wrapper that classifies
				// its end (TestSandboxClassify runs it).
				argv = withoutClassify(t, argv, len(start))
			}
			if want := append(append(start, plan.ViewDir+"/bin/flux"), run...); !slices.Equal(argv, want) {
				t.Errorf("flux start argv\n got %q\nwant %q", r.start.argv, want)
			}
			if r.run == nil {
				t.Fatalf("flux run never ran:\n%s", r.stderr)
			}
			if !slices.Equal(r.run.argv, run) {
				t.Errorf("flux run argv\n got %q\nwant %q", r.run.argv, run)
			}
			if r.run.env["FLUX_URI"] != "local:///stub/local" {
				t.Errorf("flux run saw FLUX_URI=%q, want the one flux start set", r.run.env["FLUX_URI"])
			}
			checkLog(t, r.stderr, "jobset-flux: ", "starting: /mnt/flux/install/view/bin/flux start")
			if testing.Verbose() {
				t.Logf("entrypoint log:\n%s", r.stderr)
			}
		})
	}
}

// withoutQueueStart is a flux start argv whose initial program, after
// at, is bash -c <the queue start> start-queues <flux> <program>, with
// the program alone there.
func withoutQueueStart(t *testing.T, argv []string, at int) []string {
	t.Helper()
	if len(argv) < at+5 || !strings.HasSuffix(argv[at], "/bash") || argv[at+1] != "-c" || argv[at+3] != "start-queues" || argv[at+4] != plan.ViewDir+"/bin/flux" {
		t.Errorf("flux start argv %q: the program is not started by bash -c ... start-queues %s/bin/flux", argv, plan.ViewDir)
		return argv
	}
	return append(slices.Clip(argv[:at]), argv[at+5:]...)
}

// withoutClassify removes infra-restarts' wrapper from a flux start argv,
// at index at, checking its shape.
func withoutClassify(t *testing.T, argv []string, at int) []string {
	t.Helper()
	if len(argv) < at+6 || !strings.HasSuffix(argv[at], "/bash") || argv[at+1] != "-c" || argv[at+3] != "classify" || argv[at+4] != plan.ViewDir+"/bin/flux" || argv[at+5] != plan.RunDir+"/ending" {
		t.Errorf("flux start argv %q: the program is not run by bash -c ... classify %s/bin/flux %s/ending", argv, plan.ViewDir, plan.RunDir)
		return argv
	}
	return append(slices.Clip(argv[:at]), argv[at+6:]...)
}

// TestSandboxExitCodes checks that the container's exit code is the job's
// on rank 0 and 0 on followers, which never run the command.
func TestSandboxExitCodes(t *testing.T) {
	requireSandbox(t)
	p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, nil)
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	user := []string{"hostname", "-s"}
	for _, exit := range []int{0, 3, 137} {
		for _, rank := range []int{0, 1} {
			t.Run(fmt.Sprintf("rank %d job exit %d", rank, exit), func(t *testing.T) {
				r := pd.runAs("app", nil, rankEnv(rank, exit), user...)
				want := exit
				if rank != 0 {
					want = 0
					if r.run != nil {
						t.Errorf("follower ran flux run %q", r.run.argv)
					}
				} else if r.run == nil {
					t.Errorf("leader did not run flux run")
				}
				if r.code != want {
					t.Errorf("container exited %d, want %d:\n%s", r.code, want, r.stderr)
				}
				if r.start == nil || !slices.Equal(r.start.argv, append(append(expectedStart(p), plan.ViewDir+"/bin/flux"), expectedRun(p, user)...)) {
					t.Errorf("flux start was not given the initial program: %+v", r.start)
				}
			})
		}
	}
}

// TestSandboxLauncher: in launcher mode the user's words are flux start's
// initial program, after --, with no flux run; rank 0 exits with the
// program's code, followers with 0.
func TestSandboxLauncher(t *testing.T) {
	requireSandbox(t)
	p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) { p.Settings.Launcher = true })
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	user := []string{"bash", "-c", `[[ $FLUX_URI == local:///stub/local ]] && exit 5`}
	for _, rank := range []int{0, 1} {
		t.Run(fmt.Sprintf("rank %d", rank), func(t *testing.T) {
			r := pd.runAs("app", nil, rankEnv(rank, 0), user...)
			want := 5
			if rank != 0 {
				want = 0
			}
			if r.code != want {
				t.Errorf("container exited %d, want %d:\n%s", r.code, want, r.stderr)
			}
			if r.run != nil {
				t.Errorf("launcher mode ran flux run %q", r.run.argv)
			}
			if wantArgv := append(append(expectedStart(p), "--"), user...); r.start == nil || !slices.Equal(r.start.argv, wantArgv) {
				t.Errorf("flux start argv\n got %+v\nwant %q", r.start, wantArgv)
			}
		})
	}
	// A worker without a command serves: its broker starts with no
	// program.
	r := pd.runAs("app", nil, rankEnv(1, 0))
	if r.code != 0 || r.start == nil || !slices.Equal(r.start.argv, expectedStart(p)) {
		t.Errorf("launcher worker without a command: exit %d, flux start %+v, want %q", r.code, r.start, expectedStart(p))
	}
	checkLog(t, r.stderr, "jobset-flux: ", "no command: this broker only serves the instance")
}

// TestSandboxNoCommand: a worker whose container has no command (the
// render refuses that only on rank 0's) starts its broker with no initial
// program and serves; it must not die, or its Job fails the JobSet.
func TestSandboxNoCommand(t *testing.T) {
	requireSandbox(t)
	p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, nil)
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	r := pd.runAs("app", nil, rankEnv(1, 0))
	if r.code != 0 {
		t.Fatalf("a worker without a command exited %d:\n%s", r.code, r.stderr)
	}
	checkLog(t, r.stderr, "jobset-flux: ", "no command: this broker only serves the instance")
	if r.start == nil || !slices.Equal(r.start.argv, expectedStart(p)) {
		t.Errorf("flux start %+v, want %q with no program", r.start, expectedStart(p))
	}
	if r.run != nil {
		t.Errorf("flux run ran: %q", r.run.argv)
	}
}

func TestSandboxInteractiveWithoutCommand(t *testing.T) {
	requireSandbox(t)
	p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) { p.Interactive = true })
	pd := newPod(t, p, 0o444, 0)
	pd.installView()
	r := pd.runAs("app", nil, rankEnv(0, 5))
	if r.code != 0 {
		t.Fatalf("entrypoint exited %d:\n%s", r.code, r.stderr)
	}
	if r.start == nil || !slices.Equal(r.start.argv, expectedStart(p)) {
		t.Errorf("flux start = %+v, want argv %q", r.start, expectedStart(p))
	}
	if strings.Contains(r.stderr, "ignoring") {
		t.Errorf("logged an ignored command although there was none:\n%s", r.stderr)
	}
}

// TestSandboxCertificate checks the private certificate copy for the
// identities and Secret modes a pod can have, including a container
// restart that finds the previous 0400 copy.
func TestSandboxCertificate(t *testing.T) {
	requireSandbox(t)
	user := func(groups ...string) []string {
		id := []string{"--reuid", fmt.Sprint(nonRoot), "--regid", fmt.Sprint(nonRoot)}
		if len(groups) == 0 {
			return append(id, "--clear-groups")
		}
		return append(id, "--groups", strings.Join(groups, ","))
	}
	for _, tc := range []struct {
		name      string
		identity  []string
		uid       int
		mode      os.FileMode
		certGroup int
	}{
		{"root, default Secret mode", nil, 0, 0o444, 0},
		{"root, fsGroup Secret", nil, 0, 0o440, fsGroup},
		{"non-root, default Secret mode", user(), nonRoot, 0o444, 0},
		{"non-root, fsGroup Secret", user(fmt.Sprint(fsGroup)), nonRoot, 0o440, fsGroup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pd := newPod(t, newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, nil), tc.mode, tc.certGroup)
			pd.installView()
			want := fmt.Sprintf("400 %d", tc.uid)
			for run := 1; run <= 2; run++ { // the second run is a container restart
				r := pd.runAs("app", tc.identity, rankEnv(0, 0), "true")
				if r.code != 0 {
					t.Fatalf("run %d: entrypoint exited %d:\n%s", run, r.code, r.stderr)
				}
				if r.start == nil || r.start.cert != want {
					t.Fatalf("run %d: at flux start the certificate was %+v, want %q", run, r.start, want)
				}
				cert := filepath.Join(pd.install, "run", plan.CertKey)
				if got := string(readFile(t, cert)); got != certSecret {
					t.Errorf("run %d: the copy holds %q, want the Secret's content", run, got)
				}
				for _, dir := range []string{"run", "run/rundir", "run/statedir"} {
					fi, err := os.Stat(filepath.Join(pd.install, dir))
					if err != nil {
						t.Fatal(err)
					}
					owner := int(fi.Sys().(*syscall.Stat_t).Uid)
					if fi.Mode().Perm() != 0o700 || owner != tc.uid {
						t.Errorf("run %d: %s has mode %v owner %d, want 0700 owned by %d", run, dir, fi.Mode().Perm(), owner, tc.uid)
					}
				}
			}
		})
	}
}

// checkLog checks that every line of a script's stderr carries its prefix
// and that one of them contains want.
func checkLog(t *testing.T, stderr, prefix, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	found := false
	for _, line := range lines {
		if !strings.HasPrefix(line, prefix) {
			t.Errorf("log line %q lacks the prefix %q", line, prefix)
		}
		found = found || strings.Contains(line, want)
	}
	if !found {
		t.Errorf("no log line contains %q:\n%s", want, stderr)
	}
}

func mkdir(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	// Chmod, because MkdirAll's mode is filtered by the umask.
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

func clearDir(t *testing.T, dir string) {
	t.Helper()
	for _, name := range dirNames(t, dir) {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSandboxScheduler: Fluxion's discovery variables are set when the view
// has Fluxion, and only then; without it the entrypoint says which
// scheduler runs, and a queue policy only Fluxion has is a warning.
func TestSandboxScheduler(t *testing.T) {
	requireSandbox(t)
	for _, tc := range []struct {
		name          string
		fluxion       bool
		policy        string
		want, wantNot string
	}{
		{"fluxion", true, "easy", "scheduler: Fluxion, queue-policy easy", "warning"},
		{"flux-core only, fcfs", false, "fcfs", "scheduler: sched-simple (the Flux view has no Fluxion)", "warning"},
		{"flux-core only, easy", false, "easy", "warning: queue-policy easy needs Fluxion, which the Flux view lacks", "scheduler: Fluxion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) { p.Settings.QueuePolicy = tc.policy })
			pd := newPod(t, p, 0o444, 0)
			pd.installView()
			if tc.fluxion {
				modules := filepath.Join(pd.install, "view/lib/flux/modules")
				mkdir(t, modules, 0o755)
				writeFile(t, filepath.Join(modules, "sched-fluxion-qmanager.so"), "", 0o755)
			}
			r := pd.runAs("app", nil, rankEnv(0, 0), "true")
			if r.code != 0 || r.start == nil {
				t.Fatalf("entrypoint exited %d:\n%s", r.code, r.stderr)
			}
			checkEnvironment(t, r.start, tc.fluxion)
			checkLog(t, r.stderr, "jobset-flux: ", tc.want)
			if strings.Contains(r.stderr, tc.wantNot) {
				t.Errorf("log has %q:\n%s", tc.wantNot, r.stderr)
			}
		})
	}
}

// TestSandboxViewCannotRun: a view whose programs cannot load in the image
// (built on a newer glibc) stops the entrypoint with one line that says so,
// before flux start fails somewhere deep inside.
func TestSandboxViewCannotRun(t *testing.T) {
	requireSandbox(t)
	pd := newPod(t, newPlan([]group{{"w", 1, 1, "js-w-0-0"}}, nil), 0o444, 0)
	pd.installView()
	r := pd.runAs("app", nil, append(rankEnv(0, 0), "STUB_BROKEN=1"), "true")
	if r.code == 0 {
		t.Fatalf("the entrypoint went on with a view that cannot run:\n%s", r.stderr)
	}
	if r.start != nil {
		t.Errorf("flux start ran: %q", r.start.argv)
	}
	checkLog(t, r.stderr, "jobset-flux: ", "GLIBC_2.38")
	checkLog(t, r.stderr, "jobset-flux: ", "set view-image to a view for this image's OS")
	if n := strings.Count(r.stderr, "\n"); n != 1 {
		t.Errorf("want the diagnosis on one line, got %d lines:\n%s", n, r.stderr)
	}
}
