package flux

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/flux/internal/kubelet"
)

// instanceTimeout bounds one Flux instance from the first pod to the end:
// brokers on this 2-CPU machine start in seconds, the rest is the job.
const instanceTimeout = 3 * time.Minute

// TestArgv: the container's words reach every task one for one, whatever
// they hold, after Kubernetes' own $(VAR) expansion.
func TestArgv(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	r := startArgv(t, nil)
	res := r.wait(instanceTimeout)
	if n := argvIntact(r); n != 2 || res.State != "Completed" {
		dump(t, res)
		t.Errorf("the words reached %d of 2 tasks intact, JobSet %s; want each task to print\n%s", n, res.State, argvWant())
	}
}

var argvWords = []string{"plain", "two words", "'single'", `"double"`, `$HOME`, `$(UNSET_VAR)`, "*", "?[a]", "line1\nline2", "tab\there", `back\slash`, "", "-n", "--", `;|&<>()`, "$$"}

// startArgv runs a 2-pod JobSet whose tasks print their argv as one JSON
// line each (Flux interleaves tasks' output line by line), after mutate
// changed the render.
func startArgv(t *testing.T, mutate func(*kubelet.Objects)) *run {
	argv := append([]string{"/usr/bin/python3", "-c", "import json, sys; print(json.dumps(sys.argv[1:]))"}, argvWords...)
	objs := decode(t, render(t, jobSet(t, "argv", nil, argv, group{name: "w", replicas: 1, completions: 2})))
	if mutate != nil {
		mutate(&objs)
	}
	return startObjects(t, objs, nil)
}

func argvWant() string {
	expanded := slices.Clone(argvWords)
	expanded[len(expanded)-1] = "$" // Kubernetes turns $$ into $
	want, _ := json.Marshal(expanded)
	return string(want)
}

// argvIntact counts the tasks that printed the words intact.
func argvIntact(r *run) int {
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	var words []string
	_ = json.Unmarshal([]byte(argvWant()), &words)
	_ = enc.Encode(words)
	// Python's json.dumps separates with ", ".
	line := strings.ReplaceAll(strings.TrimSpace(want.String()), `","`, `", "`)
	return strings.Count(logs(r.c.Pod("argv-w-0-0"), "app"), line+"\n")
}

// TestTopology: the tree the function configures is the one the brokers
// use.
func TestTopology(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	groups := []group{{name: "w", replicas: 1, completions: 4}}
	cmd := []string{"bash", "-c", `[ "$FLUX_TASK_RANK" != 0 ] || { ` + fluxBin + ` getattr tbon.topo; ` + fluxBin + ` getattr size; }`}
	r := start(t, render(t, jobSet(t, "topo", map[string]string{"flux-framework.org/topology": "kary:2"}, cmd, groups...)), nil)
	res := r.wait(instanceTimeout)
	out := logs(r.c.Pod("topo-w-0-0"), "app")
	if !strings.Contains(out, "kary:2\n4\n") || res.State != "Completed" {
		dump(t, res)
		t.Errorf("want tbon.topo kary:2 and size 4 in the leader's output")
	}
}

// TestFluxFacts asserts, from inside the job, what the other issues rely
// on: which scheduler the instance loaded and the environment the job sees.
func TestFluxFacts(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	ctr := map[string]any{
		"name": "app", "image": hostImage,
		"env": []any{map[string]any{"name": "LD_LIBRARY_PATH", "value": "/opt/app/lib"}},
		"command": []string{"bash", "-c", `
echo "PATH=$PATH"
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH-<unset>}"
echo "PYTHONPATH=${PYTHONPATH-<unset>}"
echo "python3=$(command -v python3)"
` + fluxBin + ` module list | awk 'NR > 1 {print "module", $1}'
for f in etc/flux/modprobe/modprobe.d/fluxion.toml etc/flux/rc1.d/01-sched-fluxion lib/flux/modules/sched-fluxion-qmanager.so; do
	[ -e "/mnt/flux/install/view/$f" ] && echo "view has $f"
done`},
	}
	groups := []group{{name: "w", replicas: 1, completions: 2, container: ctr}}
	r := start(t, render(t, jobSet(t, "facts", map[string]string{"flux-framework.org/queue-policy": "easy"}, nil, groups...)), nil)
	res := r.wait(instanceTimeout)
	out := logs(r.c.Pod("facts-w-0-0"), "app")
	t.Logf("job output:\n%s", out)
	if res.State != "Completed" {
		dump(t, res)
		t.Fatalf("JobSet %s", res.State)
	}
	env := checks{t: t}
	lines := strings.Split(out, "\n")
	// flux appends its own bin directory (only flux is in it) to PATH, and
	// the job shell's PMI plugin puts Flux's PMI library directory (only
	// libpmi*.so) first in LD_LIBRARY_PATH: both by Flux's design, neither
	// shadows the image.
	fluxDir := `/opt/software/[^:]*/flux-core-[^:/]*/`
	pathOK := regexp.MustCompile(`^PATH=` + regexp.QuoteMeta(defaultPath) + `(:` + fluxDir + `bin)?$`).MatchString
	ldOK := regexp.MustCompile(`^LD_LIBRARY_PATH=(` + fluxDir + `lib/flux:)?/opt/app/lib$`).MatchString
	for _, want := range []struct {
		what string
		ok   func(string) bool
	}{
		{"PATH is the image's (flux at most appended)", pathOK},
		{"LD_LIBRARY_PATH is the container's (after Flux's PMI libraries)", ldOK},
		{"PYTHONPATH is unset, as in the image", func(l string) bool { return l == "PYTHONPATH=<unset>" }},
		{"python3 is the image's", func(l string) bool { return l == "python3=/usr/bin/python3" }},
	} {
		if n := countFunc(lines, want.ok); n != 2 {
			env.errorf("%s: %d of 2 tasks", want.what, n)
		}
	}
	env.report("")

	sched := checks{t: t}
	if !slices.Contains(lines, "module sched-fluxion-qmanager") || !slices.Contains(lines, "module sched-fluxion-resource") {
		sched.errorf("Fluxion is not loaded although the view has it: %q", grep(lines, "module sched"))
	}
	// The entrypoint points flux modprobe at etc/flux/modprobe and the
	// rc1.d scripts of older flux-core at etc/flux (FLUX_RC_EXTRA): both
	// must be where a Spack view of flux-sched puts them.
	for _, f := range []string{"etc/flux/modprobe/modprobe.d/fluxion.toml", "etc/flux/rc1.d/01-sched-fluxion", "lib/flux/modules/sched-fluxion-qmanager.so"} {
		if !slices.Contains(lines, "view has "+f) {
			sched.errorf("the view has no %s", f)
		}
	}
	sched.report("")
}

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func countFunc(lines []string, ok func(string) bool) int {
	n := 0
	for _, l := range lines {
		if ok(l) {
			n++
		}
	}
	return n
}

func grep(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}
