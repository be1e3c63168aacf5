package transform_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/internal/testenv"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// The init container needs no privilege: it cannot escalate, drops every
// capability, and writes only to emptyDirs, so it runs under the
// restricted Pod Security Standard with runAsNonRoot and a read-only root
// file system set by the pod.
func TestInitContainerUnprivileged(t *testing.T) {
	p := hProcessor(t)
	js := hJobSet{
		podSecurity:       map[string]any{"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
		containerSecurity: map[string]any{"readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []string{"ALL"}}},
	}
	rl, ok, _ := hRun(t, p, hList(t, nil, js.object()))
	if !ok {
		t.Fatal(hDump(rl))
	}
	obj := hFind(rl, "JobSet", "js")
	init := hContainer(t, obj, "initContainers", 0)
	if name, _, _ := init.NestedString("name"); name != plan.InitContainerName {
		t.Fatalf("initContainers[0] is %q", name)
	}
	if v, found, _ := init.NestedBool("securityContext", "allowPrivilegeEscalation"); !found || v {
		t.Error("the init container may escalate privileges")
	}
	if drop, _, _ := init.NestedStringSlice("securityContext", "capabilities", "drop"); !slices.Equal(drop, []string{"ALL"}) {
		t.Errorf("the init container drops %q, want [ALL]", drop)
	}
	// It writes only to emptyDirs, so its own root file system is read-only
	// (a container-level field: nothing of the pod's is overridden), and it
	// inherits the pod's seccomp profile (it gets RuntimeDefault only when
	// the pod sets none: testdata/golden/seccomp-pod-profile).
	if v, found, _ := init.NestedBool("securityContext", "readOnlyRootFilesystem"); !found || !v {
		t.Error("the init container's root file system is writable")
	}
	if _, found, _ := init.NestedSubObject("securityContext", "seccompProfile"); found {
		t.Error("the init container sets a seccompProfile, overriding the pod's")
	}
	for _, field := range [][]string{{"securityContext", "privileged"}, {"securityContext", "capabilities", "add"}, {"securityContext", "runAsUser"}, {"securityContext", "runAsNonRoot"}} {
		if _, found, _ := init.NestedString(field...); found {
			t.Errorf("the init container sets %s, overriding the pod", strings.Join(field, "."))
		}
		if _, found, _ := init.NestedBool(field...); found {
			t.Errorf("the init container sets %s, overriding the pod", strings.Join(field, "."))
		}
	}
	// The pod's and the app container's security settings are kept.
	items, _, _ := obj.NestedSlice("spec", "replicatedJobs")
	if v, _, _ := items[0].NestedBool("template", "spec", "template", "spec", "securityContext", "runAsNonRoot"); !v {
		t.Error("the pod lost runAsNonRoot")
	}
	app := hContainer(t, obj, "containers", 0)
	if v, _, _ := app.NestedBool("securityContext", "readOnlyRootFilesystem"); !v {
		t.Error("the app container lost readOnlyRootFilesystem")
	}

	// Every path the scripts write to is inside an emptyDir mounted into
	// the container that writes it.
	volumes, _, _ := items[0].NestedSlice("template", "spec", "template", "spec", "volumes")
	emptyDirs := map[string]bool{}
	for _, v := range volumes {
		name, _, _ := v.NestedString("name")
		if _, found, _ := v.NestedSubObject("emptyDir"); found {
			emptyDirs[name] = true
		}
	}
	writable := func(c *fn.SubObject) []string {
		var paths []string
		mounts, _, _ := c.NestedSlice("volumeMounts")
		for _, m := range mounts {
			name, _, _ := m.NestedString("name")
			path, _, _ := m.NestedString("mountPath")
			if ro, _, _ := m.NestedBool("readOnly"); emptyDirs[name] && !ro {
				paths = append(paths, path)
			}
		}
		return paths
	}
	cm := hFind(rl, "ConfigMap", "js"+plan.ConfigMapSuffix)
	data, _, _ := cm.NestedStringMap("data")
	for _, c := range []struct {
		script    string
		container *fn.SubObject
		targets   []string // the variables the script writes below
	}{
		{data[plan.InitScript], init, []string{"view_dir", "software_staging"}},
		{data[plan.EntrypointScript], app, []string{"run_dir", "cert"}},
	} {
		dirs := writable(c.container)
		for _, v := range c.targets {
			m := regexp.MustCompile(`(?m)^` + v + `='([^']*)'$`).FindStringSubmatch(c.script)
			if m == nil {
				t.Errorf("the script no longer sets %s", v)
				continue
			}
			if !slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(m[1]+"/", strings.TrimRight(d, "/")+"/") }) {
				t.Errorf("%s=%s is not inside a writable emptyDir (%s)", v, m[1], strings.Join(dirs, ", "))
			}
		}
		// No write to a fixed path outside those variables (discarding
		// output into /dev/null writes nothing).
		unquoted := strings.ReplaceAll(hOutsideQuotes(c.script), ">/dev/null", "")
		for _, w := range []string{"> /", ">/", "tee /", "mkdir /", "cp /", "mktemp", "/tmp"} {
			if strings.Contains(unquoted, w) {
				t.Errorf("a script writes with %q", w)
			}
		}
	}
}

// hROHarness runs one container of a rendered pod in a private mount
// namespace with a read-only root file system: only the emptyDirs are
// writable, everything else (/, /tmp, the view image, the ConfigMap and
// Secret volumes) is read-only, and the script runs as uid 1000. Arguments:
// init|app, the host directories (image, config, curve), then the command.
const hROHarness = `set -euo pipefail
[[ $(readlink /proc/self/ns/mnt) != "$(readlink /proc/1/ns/mnt)" ]] || { echo "not in a private mount namespace" >&2; exit 125; }
role=$1 image=$2 config=$3 curve=$4 state=$5
shift 5
# Everything mounted now is read-only from here on (per-mount flags only:
# this namespace's mounts, never the host's).
while read -r _ _ _ _ point _; do
	case $point in /proc*|/sys*|/dev*) continue ;; esac
	mount -o remount,bind,ro -- "$point" 2>/dev/null || true
done </proc/self/mountinfo
mount -t tmpfs -o mode=0755 jobset-flux-ro /mnt
mkdir -p /mnt/flux/install /mnt/flux/software /mnt/flux/config /mnt/flux/curve
# The emptyDirs persist between the init and the app container in $state.
# (a bind mount inherits the read-only flag of its source: make it rw)
mount --bind -- "$state/install" /mnt/flux/install
mount -o remount,bind,rw /mnt/flux/install
mount --bind -- "$config" /mnt/flux/config
mount -o remount,bind,ro /mnt/flux/config
if [[ $role == init ]]; then
	mount --bind -- "$state/software" /mnt/flux/software
	mount -o remount,bind,rw /mnt/flux/software
	mount --bind -- "$image" /opt
	mount -o remount,bind,ro /opt
else
	mount -t tmpfs -o mode=0755 jobset-flux-ro /opt
	mkdir /opt/software
	mount -o remount,ro /opt
	mount --bind -- "$state/software" /opt/software
	mount -o remount,bind,rw /opt/software
	mount --bind -- "$curve" /mnt/flux/curve
	mount -o remount,bind,ro /mnt/flux/curve
fi
mount -o remount,ro /mnt
cd /
exec setpriv --reuid=1000 --regid=1000 --clear-groups -- "$@"
`

// The init container and the entrypoint really run as a non-root user
// with a read-only root file system: they write only to their emptyDirs.
// Needs root (mount namespaces), unshare, setpriv and bash; skipped
// without them outside CI.
func TestScriptsReadOnlyRootNonRoot(t *testing.T) {
	for _, tool := range []string{"bash", "unshare", "setpriv"} {
		testenv.Tool(t, tool)
	}
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "mount namespaces need root")
	}
	if out, err := exec.Command("unshare", "--mount", "--propagation", "private", "true").CombinedOutput(); err != nil {
		testenv.SkipOrFail(t, "unshare --mount does not work here: %v %s", err, out)
	}
	p := hProcessor(t)
	rl, ok, _ := hRun(t, p, hList(t, nil, hJobSet{command: []string{"app", "--flag"}}.object()))
	if !ok {
		t.Fatal(hDump(rl))
	}
	data, _, _ := hFind(rl, "ConfigMap", "js"+plan.ConfigMapSuffix).NestedStringMap("data")

	root := t.TempDir()
	dir := func(parts ...string) string {
		d := filepath.Join(append([]string{root}, parts...)...)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	write := func(path, text string, mode os.FileMode) {
		if err := os.WriteFile(path, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	// The view image's /opt: view -> views/view -> views/._view/h, whose
	// bin/flux links into the software tree. The stub flux records its
	// arguments on stdout.
	image := dir("image")
	sw := dir("image", "software", "flux-core", "bin")
	write(filepath.Join(sw, "flux"), "#!/bin/bash\nprintf 'flux-stub:'; printf ' %q' \"$@\"; echo\n", 0o755)
	dir("image", "views", "._view", "h", "bin")
	dir("image", "views", "._view", "h", "lib", "python3.12", "site-packages")
	for _, l := range [][2]string{
		{"/opt/software/flux-core/bin/flux", "views/._view/h/bin/flux"},
		{"._view/h", "views/view"},
		{"/opt/views/view", "view"},
	} {
		if err := os.Symlink(l[0], filepath.Join(image, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	config := dir("config")
	for key, text := range data {
		write(filepath.Join(config, key), text, 0o555)
	}
	curveDir := dir("curve")
	write(filepath.Join(curveDir, plan.CertKey), "# a certificate\n", 0o444)
	// emptyDirs: world-writable, so that any runAsUser can use them.
	state := dir("state")
	for _, d := range []string{"install", "software"} {
		if err := os.Chmod(dir("state", d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}

	harness := func(role string, command ...string) string {
		args := append([]string{"--mount", "--propagation", "private", "bash", "-c", hROHarness, "harness", role, image, config, curveDir, state}, command...)
		cmd := exec.Command("unshare", args...)
		cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/nonexistent"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s container failed: %v\n%s", role, err, out)
		}
		return string(out)
	}
	harness("init", "/mnt/flux/config/init.sh")
	if _, err := os.Lstat(filepath.Join(state, "install", "view", "bin", "flux")); err != nil {
		t.Fatalf("the init container did not install the view: %v", err)
	}
	out := harness("app", "/mnt/flux/config/entrypoint.sh", "app", "--flag")
	if !strings.Contains(out, "flux-stub: start") || !strings.Contains(out, "-- app --flag") {
		t.Errorf("the entrypoint did not start flux with the command:\n%s", out)
	}
	// A write outside the emptyDirs fails in this harness: prove it, or
	// the test proves nothing.
	for _, probe := range []string{"/tmp/jobset-flux-ro-probe", "/jobset-flux-ro-probe", "/mnt/flux/config/probe", "/mnt/flux/curve/probe"} {
		out, err := exec.Command("unshare", "--mount", "--propagation", "private", "bash", "-c", hROHarness, "harness", "app", image, config, curveDir, state, "touch", probe).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Read-only file system") {
			os.Remove(probe)
			t.Fatalf("the harness lets uid 1000 write %s: %v %s", probe, err, out)
		}
	}
}
