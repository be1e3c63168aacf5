package fluxfiles

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/internal/testenv"
	"github.com/pelletier/go-toml/v2"

	hostlist "github.com/jobset-flux/jobset-flux/pkg/hostlist/hostlisttest"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// group is one replicatedJob of a test plan; hosts is its hostlist as
// written by hand.
type group struct {
	name                  string
	replicas, completions int
	hosts                 string
}

// newPlan builds a complete plan for JobSet js with the given groups;
// edit adjusts the defaults before the derived counts are filled in.
func newPlan(groups []group, edit func(*plan.Plan)) *plan.Plan {
	p := &plan.Plan{
		Settings:       settings.Defaults(),
		Namespace:      "team-a",
		Name:           "js",
		Subdomain:      "js",
		ConfigMapName:  "js" + plan.ConfigMapSuffix,
		SecretName:     "js" + plan.SecretSuffix,
		GenerateSecret: true,
		ViewImage:      "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble",
		TasksPerNode:   1,
		CoresPerTask:   4,
	}
	for i, g := range groups {
		p.Groups = append(p.Groups, plan.Group{
			Index: i, Name: g.name, Replicas: g.replicas, Completions: g.completions, PodsPerJob: g.completions, MinPods: g.completions,
			FirstRank: p.Brokers, Hosts: g.hosts, Cores: 4, RunsJob: true,
		})
		p.Brokers += g.replicas * g.completions
	}
	if edit != nil {
		edit(p)
	}
	if p.JobNodes == 0 {
		for _, g := range p.Groups {
			if g.RunsJob {
				p.JobNodes += g.Replicas * g.PodsPerJob
			}
		}
	}
	if p.Tasks == 0 {
		p.Tasks = p.JobNodes * p.TasksPerNode
	}
	return p
}

// setGroups sets every group's cores and GPUs per node.
func setGroups(p *plan.Plan, cores, gpus int) {
	for i := range p.Groups {
		p.Groups[i].Cores, p.Groups[i].GPUs = cores, gpus
	}
}

// podNames lists the pods' hostnames <jobset>-<group>-<job>-<pod> in rank
// order, computed from the shape alone (not from the hostlists).
func podNames(p *plan.Plan) []string {
	var names []string
	for _, g := range p.Groups {
		for j := 0; j < g.Replicas; j++ {
			for c := 0; c < g.PodsPerJob; c++ {
				names = append(names, fmt.Sprintf("%s-%s-%d-%d", p.Name, g.Name, j, c))
			}
		}
	}
	return names
}

type variant struct {
	name string
	plan *plan.Plan
}

// variants covers the shapes and settings Render must handle.
func variants() []variant {
	gpus := func(perNode, tasks, perTask int) func(*plan.Plan) {
		return func(p *plan.Plan) {
			p.TasksPerNode, p.GPUsPerTask = tasks, perTask
			setGroups(p, 8, perNode)
			p.CoresPerTask = 8 / tasks
		}
	}
	return []variant{
		{"single pod", newPlan([]group{{"w", 1, 1, "js-w-0-0"}}, func(p *plan.Plan) {
			setGroups(p, 1, 0)
			p.CoresPerTask = 1
		})},
		{"replicas 1 completions 3", newPlan([]group{{"w", 1, 3, "js-w-0-[0-2]"}}, func(p *plan.Plan) {
			p.TasksPerNode, p.CoresPerTask = 2, 2
		})},
		{"replicas 3 completions 1, bind all", newPlan([]group{{"w", 3, 1, "js-w-[0-2]-0"}}, func(p *plan.Plan) {
			p.Settings.NetworkDevice = "*"
		})},
		{"replicas 1 completions 3, state on a claim", newPlan([]group{{"w", 1, 3, "js-w-0-[0-2]"}}, func(p *plan.Plan) {
			p.Settings.StateClaim = "my-claim"
			p.State = &plan.State{Volume: plan.StateVolume, Claim: "my-claim", Dir: plan.StateMountDir + "/js", Leader: "js-w-0-0"}
		})},
		{"replicas 1 completions 2, infra-restarts", newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) {
			p.Settings.InfraRestarts = 2
		})},
		{"launcher, infra-restarts, state on a claim", newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) {
			p.Settings.InfraRestarts, p.Settings.Launcher = 1, true
			p.JobNodes, p.Tasks, p.CoresPerTask, p.TasksPerNode = 2, 0, 0, 0
			p.State = &plan.State{Volume: plan.StateVolume, Claim: "c", Dir: plan.StateMountDir + "/js", Leader: "js-w-0-0"}
		})},
		{"replicas 1 completions 2, ipv6", newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) {
			p.Settings.IPFamily = settings.IPv6
		})},
		{"replicas 2 completions 2, 2 gpus 2 tasks", newPlan([]group{{"w", 2, 2, "js-w-0-[0-1],js-w-1-[0-1]"}},
			gpus(2, 2, 1))},
		{"replicas 3 completions 3, easy, port 9000", newPlan([]group{{"w", 3, 3, "js-w-0-[0-2],js-w-1-[0-2],js-w-2-[0-2]"}},
			func(p *plan.Plan) { p.Settings.QueuePolicy, p.Settings.Port = "easy", 9000 })},
		{"4 gpus 4 tasks, conservative", newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) {
			gpus(4, 4, 1)(p)
			p.Settings.QueuePolicy = "conservative"
		})},
		{"4 gpus 1 task, run options", newPlan([]group{{"w", 2, 1, "js-w-[0-1]-0"}}, func(p *plan.Plan) {
			gpus(4, 1, 4)(p)
			p.Settings.RunOptions = []string{"-o", "pmi=pmix", "--setattr=note=it's $HOME *", "--rlimit=memlock"}
		})},
		{"3 groups, hybrid, 2 gpus 1 task", newPlan([]group{
			{"leader", 1, 1, "js-leader-0-0"},
			{"workers", 2, 3, "js-workers-0-[0-2],js-workers-1-[0-2]"},
			{"ps", 3, 1, "js-ps-[0-2]-0"},
		}, func(p *plan.Plan) {
			gpus(2, 1, 2)(p)
			p.Settings.QueuePolicy = "hybrid"
		})},
		{"3 groups, interactive, no namespace", newPlan([]group{
			{"a", 1, 2, "js-a-0-[0-1]"},
			{"b", 2, 2, "js-b-0-[0-1],js-b-1-[0-1]"},
			{"c", 1, 1, "js-c-0-0"},
		}, func(p *plan.Plan) {
			p.Interactive, p.Namespace = true, ""
			p.Settings.Topology, p.Settings.ConnectTimeout = "kary:2", "2.5s"
		})},
		{"1 gpu, other subdomain", newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) {
			gpus(1, 1, 1)(p)
			p.Subdomain = "flux-net"
		})},
		// A GPU-less launcher with 2 cores and two 2-GPU workers: each
		// group has its own resource entry, and the job runs on the
		// workers only (-N 2).
		{"GPU-less launcher, GPU workers", newPlan([]group{{"launcher", 1, 1, "js-launcher-0-0"}, {"workers", 2, 1, "js-workers-[0-1]-0"}}, func(p *plan.Plan) {
			gpus(2, 2, 1)(p)
			p.Groups[0].Cores, p.Groups[0].GPUs, p.Groups[0].RunsJob = 2, 0, false
		})},
		// queues: every group a queue of its name, a job without one
		// going to the group the command runs on, or rank 0's.
		{"queues, run on the GPU workers", newPlan([]group{{"cpu", 1, 1, "js-cpu-0-0"}, {"gpu", 2, 1, "js-gpu-[0-1]-0"}}, func(p *plan.Plan) {
			gpus(2, 2, 1)(p)
			p.Groups[0].Cores, p.Groups[0].GPUs, p.Groups[0].RunsJob = 2, 0, false
			p.Settings.Queues, p.DefaultQueue = true, "gpu"
		})},
		{"queues, launcher", newPlan([]group{{"cpu", 1, 1, "js-cpu-0-0"}, {"gpu", 1, 2, "js-gpu-0-[0-1]"}}, func(p *plan.Plan) {
			p.Settings.Launcher, p.Settings.Queues, p.DefaultQueue = true, true, "cpu"
			p.JobNodes, p.TasksPerNode, p.Tasks, p.CoresPerTask, p.GPUsPerTask = 0, 0, 0, 0, 0
			for i := range p.Groups {
				p.Groups[i].RunsJob = false
			}
		})},
		{"queues, interactive", newPlan([]group{{"a", 1, 2, "js-a-0-[0-1]"}, {"b-c", 1, 1, "js-b-c-0-0"}}, func(p *plan.Plan) {
			p.Interactive, p.Settings.Queues, p.DefaultQueue = true, true, "a"
		})},
		// The image's own Flux, found on PATH at run time.
		{"image flux on PATH", newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) {
			p.ImageFlux, p.ViewImage = true, ""
		})},
		// Launcher mode: the command is flux start's initial program; no
		// flux run is planned.
		{"launcher mode", newPlan([]group{{"driver", 1, 1, "js-driver-0-0"}, {"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) {
			p.Settings.Launcher = true
			p.Settings.Setup = "export A=1\n"
			level := 6
			p.Settings.LogLevel, p.Settings.BrokerAttributes = &level, []string{"broker.quorum=2", "log-filename=/tmp/b.log"}
			p.Settings.BrokerConfig = map[string]any{"resource": map[string]any{"exclude": "1"}, "job-manager": map[string]any{"max-jobs": int64(7)}}
			p.JobNodes, p.TasksPerNode, p.Tasks, p.CoresPerTask, p.GPUsPerTask = 0, 0, 0, 0, 0
			for i := range p.Groups {
				p.Groups[i].RunsJob = false
			}
		})},
		// An elastic launcher instance: the workers' Job may grow from 2
		// to 4 pods; the brokers start with a quorum of 3.
		{"elastic launcher", newPlan([]group{{"driver", 1, 1, "js-driver-0-0"}, {"w", 1, 4, "js-w-0-[0-3]"}}, func(p *plan.Plan) {
			p.Settings.Launcher = true
			p.Groups[1].Elastic, p.Groups[1].MinPods, p.Quorum = true, 2, 3
			p.JobNodes, p.TasksPerNode, p.Tasks, p.CoresPerTask, p.GPUsPerTask = 0, 0, 0, 0, 0
			for i := range p.Groups {
				p.Groups[i].RunsJob = false
			}
		})},
	}
}

var (
	bootstrapKeys = []string{"curve_cert", "default_port", "default_bind", "default_connect", "enable_ipv6", "hosts"}
	hostKeys      = []string{"host", "bind", "connect", "parent"}
	bindURI       = regexp.MustCompile(`^tcp://(\*|[A-Za-z0-9_.:-]+):%p$`)
)

// TestBrokerTOML checks every variant's broker.toml against the rules Flux
// applies to its configuration, after parsing it with a real TOML parser.
func TestBrokerTOML(t *testing.T) {
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			p := v.plan
			f, err := Generate(p)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			checkHeader(t, p, f.Broker)
			var doc map[string]any
			if err := toml.Unmarshal([]byte(f.Broker), &doc); err != nil {
				t.Fatalf("broker.toml does not parse: %v\n%s", err, f.Broker)
			}
			// broker-config's own keys (TestBrokerExtra checks them): the
			// rest is the function's.
			for name, extra := range p.Settings.BrokerConfig {
				tbl, _ := doc[name].(map[string]any)
				for k := range extra.(map[string]any) {
					delete(tbl, k)
				}
				if len(tbl) == 0 {
					delete(doc, name)
				}
			}
			tables := []string{"access", "bootstrap", "resource", "sched-fluxion-qmanager"}
			if p.Settings.Queues {
				tables = []string{"access", "bootstrap", "policy", "queues", "resource", "sched-fluxion-qmanager"}
				checkQueues(t, p, doc)
			}
			if p.State != nil {
				// TestStateCheckpointPeriod checks it.
				tables = append(tables, "kvs")
				slices.Sort(tables)
			}
			if got := sortedKeys(doc); !slices.Equal(got, tables) {
				t.Errorf("tables = %v, want %v", got, tables)
			}
			checkBootstrap(t, p, table(t, doc, "bootstrap"))
			checkResource(t, p, table(t, doc, "resource"))
			if got := table(t, doc, "sched-fluxion-qmanager"); !reflect.DeepEqual(got, map[string]any{"queue-policy": p.Settings.QueuePolicy}) {
				t.Errorf("[sched-fluxion-qmanager] = %v, want queue-policy %q", got, p.Settings.QueuePolicy)
			}
			if got := table(t, doc, "access"); !reflect.DeepEqual(got, map[string]any{"allow-root-owner": true}) {
				t.Errorf("[access] = %v, want only allow-root-owner = true", got)
			}
		})
	}
}

func checkHeader(t *testing.T, p *plan.Plan, broker string) {
	t.Helper()
	header := strings.ToLower(broker[:strings.Index(broker, "\n\n")])
	for _, want := range []string{"generated by jobset-flux", "do not edit", p.Name} {
		if !strings.Contains(header, want) {
			t.Errorf("header %q does not mention %q", header, want)
		}
	}
}

func checkBootstrap(t *testing.T, p *plan.Plan, b map[string]any) {
	t.Helper()
	for k := range b {
		if !slices.Contains(bootstrapKeys, k) {
			t.Errorf("[bootstrap] has key %q, which Flux rejects", k)
		}
	}
	if b["curve_cert"] != plan.CertPath {
		t.Errorf("curve_cert = %v, want %s", b["curve_cert"], plan.CertPath)
	}
	if b["default_port"] != int64(p.Settings.Port) {
		t.Errorf("default_port = %#v, want %d", b["default_port"], p.Settings.Port)
	}
	bind, _ := b["default_bind"].(string)
	if !bindURI.MatchString(bind) || bind != "tcp://"+p.Settings.NetworkDevice+":%p" {
		t.Errorf("default_bind = %q, want tcp://%s:%%p", bind, p.Settings.NetworkDevice)
	}
	// Flux's default is IPv4; the key is written only to change it.
	if v, ok := b["enable_ipv6"]; (p.Settings.IPFamily == settings.IPv6) != ok || (ok && v != true) {
		t.Errorf("enable_ipv6 = %#v (written %v) with ip-family %q, want true for ipv6 and unwritten otherwise", v, ok, p.Settings.IPFamily)
	}
	connect, _ := b["default_connect"].(string)
	if connect != "tcp://%h."+p.Subdomain+":%p" {
		t.Errorf("default_connect = %q, want tcp://%%h.%s:%%p (no namespace, no cluster domain)", connect, p.Subdomain)
	}
	entries, ok := b["hosts"].([]any)
	if !ok || len(entries) != len(p.Groups) {
		t.Fatalf("hosts = %#v, want %d entries (one per group)", b["hosts"], len(p.Groups))
	}
	var ranks []string
	for i, e := range entries {
		entry, ok := e.(map[string]any)
		if !ok {
			t.Fatalf("hosts[%d] = %#v, want a table", i, e)
		}
		for k := range entry {
			if !slices.Contains(hostKeys, k) {
				t.Errorf("hosts[%d] has key %q, which Flux rejects", i, k)
			}
		}
		host, _ := entry["host"].(string)
		if host != p.Groups[i].Hosts {
			t.Errorf("hosts[%d].host = %q, want the group's hostlist %q unexpanded", i, host, p.Groups[i].Hosts)
		}
		names, err := hostlist.Expand(host, 1000)
		if err != nil {
			t.Fatalf("hosts[%d].host %q: %v", i, host, err)
		}
		ranks = append(ranks, names...)
	}
	if want := podNames(p); !slices.Equal(ranks, want) {
		t.Errorf("hosts expand to %v, want the pods in rank order %v", ranks, want)
	}
}

func checkResource(t *testing.T, p *plan.Plan, r map[string]any) {
	t.Helper()
	if got := sortedKeys(r); !slices.Equal(got, []string{"config", "noverify"}) {
		t.Errorf("[resource] keys = %v, want config and noverify", got)
	}
	if r["noverify"] != true {
		t.Errorf("noverify = %#v, want true", r["noverify"])
	}
	configs, ok := r["config"].([]any)
	if !ok || len(configs) != len(p.Groups) {
		t.Fatalf("resource.config = %#v, want one table per group (%d)", r["config"], len(p.Groups))
	}
	var names []string
	for i, g := range p.Groups {
		c := configs[i].(map[string]any)
		want := map[string]any{"hosts": g.Hosts, "cores": idsetOf(g.Cores)}
		if g.GPUs > 0 {
			want["gpus"] = idsetOf(g.GPUs)
		}
		if p.Settings.Queues {
			want["properties"] = []any{g.Name}
		}
		if !reflect.DeepEqual(c, want) {
			t.Errorf("resource.config[%d] = %v, want %v", i, c, want)
		}
		hosts, err := hostlist.Expand(c["hosts"].(string), 1000)
		if err != nil {
			t.Fatalf("resource.config[%d] hosts: %v", i, err)
		}
		names = append(names, hosts...)
	}
	if !slices.Equal(names, podNames(p)) {
		t.Errorf("resource.config hosts expand to %v, want %v", names, podNames(p))
	}
}

// idsetOf is the test's own idset of n ids.
func idsetOf(n int) string {
	if n == 1 {
		return "0"
	}
	return fmt.Sprintf("0-%d", n-1)
}

func table(t *testing.T, doc map[string]any, name string) map[string]any {
	t.Helper()
	m, ok := doc[name].(map[string]any)
	if !ok {
		t.Fatalf("[%s] = %#v, want a table", name, doc[name])
	}
	return m
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestScriptsLint runs bash -n and shellcheck on both scripts of every
// variant, and checks that no hostlist leaks into a script.
func TestScriptsLint(t *testing.T) {
	bash := testenv.Tool(t, "bash")
	shellcheck := testenv.Tool(t, "shellcheck")
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			f, err := Generate(v.plan)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			dir := t.TempDir()
			var paths []string
			for name, text := range map[string]string{plan.InitScript: f.Init, plan.EntrypointScript: f.Entrypoint} {
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, []byte(text), 0o555); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, path)
				if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
					t.Errorf("bash -n %s: %v\n%s", name, err, out)
				}
				for _, g := range v.plan.Groups {
					if strings.Contains(text, g.Hosts) {
						t.Errorf("%s contains the hostlist %q", name, g.Hosts)
					}
				}
			}
			if out, err := exec.Command(shellcheck, append([]string{"-s", "bash"}, paths...)...).CombinedOutput(); err != nil {
				t.Errorf("shellcheck: %v\n%s", err, out)
			}
		})
	}
}

func TestMap(t *testing.T) {
	f := Files{Init: "i", Entrypoint: "e", Broker: "b"}
	want := map[string]string{plan.InitScript: "i", plan.EntrypointScript: "e", plan.BrokerConfig: "b"}
	if got := f.Map(); !reflect.DeepEqual(got, want) {
		t.Errorf("Map() = %v, want %v", got, want)
	}
}

// TestRenderHostileValues feeds values with TOML and shell metacharacters
// through Generate: the TOML must still parse to the same values, and the
// scripts must still be valid.
func TestRenderHostileValues(t *testing.T) {
	hostile := "a'b\"c\\d\ne$f`g%h#i]j"
	p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) {
		p.Name = hostile
		p.Subdomain = hostile
		p.Settings.NetworkDevice = hostile
		p.Settings.ConnectTimeout = hostile
		p.Settings.Topology = hostile
		p.Settings.RunOptions = []string{hostile, "", "-x"}
	})
	f, err := Generate(p)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var doc struct {
		Bootstrap struct {
			DefaultBind    string `toml:"default_bind"`
			DefaultConnect string `toml:"default_connect"`
		} `toml:"bootstrap"`
	}
	if err := toml.Unmarshal([]byte(f.Broker), &doc); err != nil {
		t.Fatalf("broker.toml does not parse: %v\n%s", err, f.Broker)
	}
	escaped := strings.ReplaceAll(hostile, "%", "%%")
	if want := "tcp://" + escaped + ":%p"; doc.Bootstrap.DefaultBind != want {
		t.Errorf("default_bind = %q, want %q", doc.Bootstrap.DefaultBind, want)
	}
	if want := "tcp://%h." + escaped + ":%p"; doc.Bootstrap.DefaultConnect != want {
		t.Errorf("default_connect = %q, want %q", doc.Bootstrap.DefaultConnect, want)
	}
	bash := testenv.Tool(t, "bash")
	for name, text := range map[string]string{plan.InitScript: f.Init, plan.EntrypointScript: f.Entrypoint} {
		if out, err := exec.Command(bash, "-n", "-c", text).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", name, err, out)
		}
	}
}

func TestRenderRejects(t *testing.T) {
	ok := func() *plan.Plan { return newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, nil) }
	if _, err := Generate(ok()); err != nil {
		t.Fatalf("Generate(valid plan): %v", err)
	}
	cases := map[string]func(*plan.Plan){
		"no groups":             func(p *plan.Plan) { p.Groups = nil },
		"empty hostlist":        func(p *plan.Plan) { p.Groups[0].Hosts = "" },
		"brokers mismatch":      func(p *plan.Plan) { p.Brokers = 3 },
		"zero replicas":         func(p *plan.Plan) { p.Groups[0].Replicas = 0 },
		"no tasks":              func(p *plan.Plan) { p.Tasks = 0 },
		"no cores":              func(p *plan.Plan) { p.Groups[0].Cores = 0 },
		"job nodes mismatch":    func(p *plan.Plan) { p.JobNodes = 1 },
		"tasks mismatch":        func(p *plan.Plan) { p.Tasks = 3 },
		"gpus not there":        func(p *plan.Plan) { p.GPUsPerTask = 1 },
		"cores not there":       func(p *plan.Plan) { p.TasksPerNode, p.Tasks = 8, 16 },
		"negative gpus":         func(p *plan.Plan) { p.GPUsPerTask = -1 },
		"settings not resolved": func(p *plan.Plan) { p.Settings = settings.Settings{} },
		"no name":               func(p *plan.Plan) { p.Name = "" },
		"no subdomain":          func(p *plan.Plan) { p.Subdomain = "" },
		"NUL in run option":     func(p *plan.Plan) { p.Settings.RunOptions = []string{"a\x00b"} },
		"NUL in topology":       func(p *plan.Plan) { p.Settings.Topology = "kary:2\x00" },
		"quorum above brokers":  func(p *plan.Plan) { p.Quorum = 3 },
		"negative quorum":       func(p *plan.Plan) { p.Quorum = -1 },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			p := ok()
			edit(p)
			if f, err := Generate(p); err == nil {
				t.Errorf("Generate accepted the plan:\n%s", f.Entrypoint)
			}
		})
	}
	if _, err := Generate(nil); err == nil {
		t.Error("Generate(nil) succeeded")
	}
}

// fill keeps the templates and Generate in step: a placeholder without a
// value and a value without a placeholder are errors, and a value is
// never scanned for placeholders.
func TestFill(t *testing.T) {
	got, err := fill("f", "a={{a}} b={{b}}", values{"a": "{{b}}", "b": "2"})
	if err != nil || got != "a={{b}} b=2" {
		t.Errorf("fill = %q, %v", got, err)
	}
	for text, want := range map[string]string{
		"a={{a}} c={{c}}": "no value for {{c}}",
		"a={{a}":          "a {{ is not closed",
		"a={{a}} b=":      "no placeholder {{b}}",
	} {
		if _, err := fill("f", text, values{"a": "1", "b": "2"}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("fill(%q) = %v, want an error saying %q", text, err, want)
		}
	}
}

// TestBrokerStrings: strings with TOML syntax, quotes and control
// characters in every string of broker.toml that comes from the JobSet
// decode to exactly what they were, and add no table.
func TestBrokerStrings(t *testing.T) {
	for _, s := range []string{"plain", "it's", `"q"`, `back\slash`, "new\nline", "tab\tcr\r", "\x00\x7f", "ünï ☃", "'''", `"""`, "a]\n[bootstrap]\nx = 1", "# c"} {
		// The queue policy and the subdomain reach the entrypoint too,
		// where a NUL byte is refused (TestRenderRejects).
		policy := strings.ReplaceAll(s, "\x00", "")
		p := newPlan([]group{{"w", 1, 2, s}}, func(p *plan.Plan) {
			p.Subdomain, p.Settings.NetworkDevice, p.Settings.QueuePolicy, p.Name = policy, s, policy, s
		})
		f, err := Generate(p)
		if err != nil {
			t.Fatalf("Generate with %q: %v", s, err)
		}
		var doc struct {
			Bootstrap struct {
				DefaultBind    string                  `toml:"default_bind"`
				DefaultConnect string                  `toml:"default_connect"`
				Hosts          []struct{ Host string } `toml:"hosts"`
			} `toml:"bootstrap"`
			Resource struct {
				Config []struct{ Hosts string } `toml:"config"`
			} `toml:"resource"`
			Qmanager struct {
				QueuePolicy string `toml:"queue-policy"`
			} `toml:"sched-fluxion-qmanager"`
		}
		if err := toml.Unmarshal([]byte(f.Broker), &doc); err != nil {
			t.Fatalf("broker.toml with %q does not parse: %v\n%s", s, err, f.Broker)
		}
		escaped := strings.ReplaceAll(s, "%", "%%")
		b := doc.Bootstrap
		if b.DefaultBind != "tcp://"+escaped+":%p" || b.DefaultConnect != "tcp://%h."+strings.ReplaceAll(policy, "%", "%%")+":%p" || len(b.Hosts) != 1 || b.Hosts[0].Host != s ||
			len(doc.Resource.Config) != 1 || doc.Resource.Config[0].Hosts != s || doc.Qmanager.QueuePolicy != policy {
			t.Errorf("%q did not round-trip: %+v\n%s", s, doc, f.Broker)
		}
		var all map[string]any
		if err := toml.Unmarshal([]byte(f.Broker), &all); err != nil {
			t.Fatal(err)
		}
		if got := sortedKeys(all); !slices.Equal(got, []string{"access", "bootstrap", "resource", "sched-fluxion-qmanager"}) {
			t.Errorf("%q made the tables %v", s, got)
		}
	}
}

// TestShWord checks with bash itself that every quoted word expands to
// exactly the original string.
func TestShWord(t *testing.T) {
	bash := testenv.Tool(t, "bash")
	words := []string{"", "plain", "two words", "it's", `"dq"`, "$HOME", "${x}", "$(id)", "`id`", "*", "?", "[a]", `a\b`, "new\nline", "'", "''", "-n", "~", "!x", "ünï"}
	var script strings.Builder
	script.WriteString("printf '%s\\0'")
	for _, w := range words {
		q, err := shWord(w)
		if err != nil {
			t.Fatalf("shWord(%q): %v", w, err)
		}
		script.WriteString(" " + q)
	}
	cmd := exec.Command(bash, "-c", script.String())
	cmd.Dir = t.TempDir()
	for _, f := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(cmd.Dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	if got := splitNUL(out); !slices.Equal(got, words) {
		t.Errorf("bash expanded the quoted words to %q, want %q", got, words)
	}
	if q, err := shWord(42); err != nil || q != "42" {
		t.Errorf("shWord(42) = %q, %v", q, err)
	}
	if _, err := shWord("a\x00b"); err == nil {
		t.Error("shWord accepted a NUL byte")
	}
	if _, err := shWord(1.5); err == nil {
		t.Error("shWord(float) succeeded")
	}
}

// splitNUL splits NUL-terminated words.
func splitNUL(b []byte) []string {
	s := string(b)
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\x00"), "\x00")
}

func BenchmarkGenerate(b *testing.B) {
	p := newPlan([]group{
		{"leader", 1, 1, "js-leader-0-0"},
		{"workers", 16, 1, "js-workers-[0-15]-0"},
	}, func(p *plan.Plan) {
		p.GPUsPerTask, p.TasksPerNode, p.CoresPerTask = 1, 4, 1
		setGroups(p, 4, 4)
		p.Groups[0].GPUs, p.Groups[0].RunsJob = 0, false
		p.JobNodes = 16
		p.Settings.RunOptions = []string{"-o", "pmi=pmix"}
	})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate(p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRenderPerGroupResources: a GPU-less launcher and GPU workers get
// one resource entry each, and flux run's -N counts only the nodes the
// job runs on.
func TestRenderPerGroupResources(t *testing.T) {
	var p *plan.Plan
	for _, v := range variants() {
		if v.name == "GPU-less launcher, GPU workers" {
			p = v.plan
		}
	}
	f, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"[[resource.config]]\nhosts = 'js-launcher-0-0'\ncores = '0-1'\n\n",
		"[[resource.config]]\nhosts = 'js-workers-[0-1]-0'\ncores = '0-7'\ngpus = '0-1'\n",
	} {
		if !strings.Contains(f.Broker, want) {
			t.Errorf("broker.toml lacks\n%s\nin:\n%s", want, f.Broker)
		}
	}
	if !strings.Contains(f.Entrypoint, `"${flux}" run -N 2 -n 4 -c 4 -g 1`) {
		t.Errorf("the entrypoint does not run on the 2 workers with -n 4 -c 4 -g 1:\n%s", f.Entrypoint)
	}
}

// TestStateCheckpointPeriod: with state-claim, broker.toml asks rank 0 to
// checkpoint its KVS every checkpointPeriod, unless broker-config sets its
// own [kvs] checkpoint-period, which then stands alone; other [kvs] keys
// of broker-config join the function's. Without state-claim there is no
// [kvs] table at all.
func TestStateCheckpointPeriod(t *testing.T) {
	state := &plan.State{Volume: plan.StateVolume, Claim: "c", Dir: plan.StateMountDir + "/js", Leader: "js-w-0-0"}
	for _, tc := range []struct {
		name   string
		state  *plan.State
		config map[string]any
		want   map[string]any
	}{
		{"no state", nil, nil, nil},
		{"state", state, nil, map[string]any{"checkpoint-period": checkpointPeriod}},
		{"state, the user's period", state, map[string]any{"kvs": map[string]any{"checkpoint-period": "1m"}}, map[string]any{"checkpoint-period": "1m"}},
		{"state, another kvs key", state, map[string]any{"kvs": map[string]any{"gc-threshold": int64(100)}}, map[string]any{"checkpoint-period": checkpointPeriod, "gc-threshold": int64(100)}},
		{"no state, the user's kvs", nil, map[string]any{"kvs": map[string]any{"checkpoint-period": "1m"}}, map[string]any{"checkpoint-period": "1m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) {
				p.State = tc.state
				p.Settings.BrokerConfig = tc.config
			})
			out, err := brokerTOML(p)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := toml.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			got, _ := doc["kvs"].(map[string]any)
			if tc.want == nil && got != nil || tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("[kvs] = %v, want %v\n%s", got, tc.want, out)
			}
			if strings.Count(out, "[kvs]") > 1 {
				t.Errorf("[kvs] written twice:\n%s", out)
			}
		})
	}
}

// TestStateFollowersAwaitLeader: with state-claim a follower's SIGTERM
// waits for rank 0 to end the instance (await_leader), so that its jobs
// end as lost to the stop rather than to a node failure; an elastic
// instance's followers keep leaving at once, draining their ranks.
func TestStateFollowersAwaitLeader(t *testing.T) {
	for _, quorum := range []int{0, 2} {
		p := newPlan([]group{{"w", 1, 3, "js-w-0-[0-2]"}}, func(p *plan.Plan) {
			p.Quorum = quorum
			p.State = &plan.State{Volume: "state", Dir: plan.StateMountDir + "/js", Leader: "js-w-0-0"}
		})
		f, err := Generate(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Contains(f.Entrypoint, "trap await_leader"), quorum == 0; got != want {
			t.Errorf("quorum %d: followers await rank 0: %v, want %v", quorum, got, want)
		}
		if !strings.Contains(f.Entrypoint, "trap keep_state") {
			t.Errorf("quorum %d: rank 0 does not keep its state on SIGTERM", quorum)
		}
	}
}
