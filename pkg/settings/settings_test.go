package settings_test

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/jobset-flux/jobset-flux/internal/cputime"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// Every setting's validator, on values users write and values they
// should not: each rejection says what a valid value looks like.
func TestCheck(t *testing.T) {
	long := strings.Repeat("9", 1<<20)
	cases := map[string]struct {
		good []string
		bad  map[string]string // value -> phrase of the error
	}{
		"view-image": {
			good: []string{"ghcr.io/converged-computing/flux-view-ubuntu:tag-noble", "localhost:5000/view:1", "view", "none", "a/b/c@sha256:" + strings.Repeat("a", 64), "ghcr.io/x/y:tag@sha256:" + strings.Repeat("0", 64)},
			bad: map[string]string{
				"":                    "must be an image reference",
				"Ghcr.io/X/Y":         "must be an image reference",
				"view:$(id)":          "must be an image reference",
				"view;id":             "must be an image reference",
				"view\nid":            "must be an image reference",
				" view":               "must be an image reference",
				"view:" + long:        "must be an image reference",
				"vіew":                "must be an image reference", // Cyrillic i
				"view@sha256:abc":     "must be an image reference",
				"https://ghcr.io/x/y": "must be an image reference",
			},
		},
		"tasks-per-node": {
			good: []string{"1", "4", "4096"},
			bad:  map[string]string{"0": "from 1 to 4096", "4097": "from 1 to 4096", "-1": "from 1 to 4096", "+4": "whole number", " 4": "whole number", "4 ": "whole number", "4.0": "whole number", "0x4": "whole number", "４": "whole number", "": "whole number", long: "whole number"},
		},
		"cores-per-node": {
			good: []string{"1", "64", "65536"},
			bad:  map[string]string{"0": "from 1 to 65536", "65537": "from 1 to 65536", "1e3": "whole number", "99999999999999999999": "whole number"},
		},
		"gpus-per-node": {
			good: []string{"0", "1", "8", "256"},
			bad:  map[string]string{"-1": "from 0 to 256", "257": "from 0 to 256", "one": "whole number", "1\n": "whole number"},
		},
		"network-device": {
			good: []string{"eth0", "*", "ib0", "enp0s31f6", "bond0.100", "net_1", "abcdefghijklmno"},
			bad: map[string]string{
				"":                 "network interface name",
				"abcdefghijklmnop": "network interface name", // 16 > IFNAMSIZ-1
				"eth0;id":          "network interface name",
				"eth%p":            "network interface name",
				"%h":               "network interface name",
				"еth0":             "network interface name", // Cyrillic e
				"eth\u200b0":       "network interface name",
				"eth0 ":            "network interface name",
				"**":               "network interface name",
				"-eth0":            "network interface name",
				"eth/0":            "network interface name",
			},
		},
		"port": {
			good: []string{"1", "8050", "65535"},
			bad:  map[string]string{"0": "from 1 to 65535", "65536": "from 1 to 65535", "80;id": "whole number", "８０５０": "whole number", "": "whole number"},
		},
		"queue-policy": {
			good: []string{"fcfs", "easy", "conservative", "hybrid"},
			bad:  map[string]string{"FCFS": "one of fcfs, easy, conservative, hybrid", "fifo": "one of", " fcfs": "one of", "": "one of"},
		},
		"connect-timeout": {
			good: []string{"5s", "500ms", "1.5m", "1h", "2d", "30", "0.5s"},
			bad:  map[string]string{"0s": "longer than zero", "0": "longer than zero", "5 s": "duration like 5s", "-5s": "duration like 5s", "5sec": "duration like 5s", "1e3s": "duration like 5s", "5s;id": "duration like 5s", "": "duration like 5s", "1234567890s": "duration like 5s"},
		},
		"topology": {
			good: []string{"kary:1", "kary:256", "kary:65536", "binomial"},
			bad:  map[string]string{"kary:0": "kary:K", "kary:65537": "kary:K", "kary:08": "kary:K", "kary:": "kary:K", "kary:2 ": "kary:K", "mincrit": "kary:K", "Binomial": "kary:K", "kary:+2": "kary:K"},
		},
		"replicated-jobs": {
			good: []string{"w", "driver,workers", "a, b", "a-1"},
			bad:  map[string]string{"": "comma-separated list", "a,,b": "comma-separated list", "A": "comma-separated list", "1a": "comma-separated list", "a,a": "twice", "a;b": "comma-separated list", "a\nb": "comma-separated list", "a\f": "comma-separated list", "a,\tb": "comma-separated list", "a\n": "comma-separated list"},
		},
		"container": {
			good: []string{"app", "a", "main-1", "1app"},
			bad:  map[string]string{"": "container name", "App": "container name", "app_1": "container name", "app.x": "container name", strings.Repeat("a", 64): "container name"},
		},
		"interactive": {
			good: []string{"true", "false"},
			bad:  map[string]string{"True": `"true" or "false"`, "yes": `"true" or "false"`, "1": `"true" or "false"`, "": `"true" or "false"`, "true ": `"true" or "false"`},
		},
		"broker-attributes": {
			good: []string{"", "broker.quorum=2", "log-filename=/tmp/x.log broker.quorum=1", "cron.directory=/etc/cron", "log-filename="},
			bad: map[string]string{
				"rundir=/tmp":              "set by jobset-flux",
				"statedir=/x":              "set by jobset-flux",
				"local-uri=local:///x":     "set by jobset-flux",
				"tbon.topo=kary:2":         "set topology",
				"tbon.fanout=2":            "set topology",
				"tbon.connect_timeout=1s":  "set connect-timeout",
				"broker.rc2_none=1":        "set interactive",
				"log-stderr-level=7":       "set log-level",
				"config.path=/x":           "--config-path",
				"broker.quorum":            "name=value",
				"-Sbroker.quorum=2":        "name=value",
				"Broker.quorum=2":          "name=value",
				"a=$(id)":                  "may only contain",
				"a=1\nb=2":                 "may only contain",
				"log-level=1 log-level=2":  "twice",
				strings.Repeat("a=1 ", 65): "at most 64",
			},
		},
		"broker-config": {
			good: []string{"", "[resource]\nexclude = \"0\"\n", "[job-manager]\nplugins = [{load = \"x.so\"}]\n[resource.rediscover]\n", "[tbon]\ntorpid_max = \"30s\"\n"},
			bad: map[string]string{
				"[bootstrap]\ndefault_port = 1\n":              "[bootstrap], which jobset-flux writes",
				"[[resource.config]]\nhosts = \"x\"\n":         "resource.config, which jobset-flux writes",
				"[resource]\npath = \"/x\"\n":                  "resource.path",
				"[resource]\nnoverify = false\n":               "resource.noverify",
				"[sched-fluxion-qmanager]\nqueue-policy = 1\n": "use queue-policy",
				"[access]\nallow-root-owner = false\n":         "access.allow-root-owner",
				"[tbon]\ntopo = \"kary:2\"\n":                  "use topology",
				"x = 1\n":                                      "top-level key",
				"[resource\n":                                  "not valid TOML",
				"[a]\nb = 1\n[a]\nb = 2\n":                     "not valid TOML",
				strings.Repeat("#", 16<<10+1):                  "at most 16384",
			},
		},
		"view-mount": {
			good: []string{"copy", "image"},
			bad:  map[string]string{"Image": "one of copy, image", "volume": "one of copy, image", "": "one of copy, image"},
		},
		"ip-family": {
			good: []string{"ipv4", "ipv6"},
			bad:  map[string]string{"IPv6": "one of ipv4, ipv6", "dual": "one of ipv4, ipv6", "6": "one of ipv4, ipv6", "": "one of ipv4, ipv6"},
		},
		"view-copy-medium": {
			good: []string{"memory", "disk"},
			bad:  map[string]string{"Memory": "one of memory, disk", "tmpfs": "one of memory, disk", "": "one of memory, disk"},
		},
		"log-level": {
			good: []string{"0", "7", "4"},
			bad:  map[string]string{"8": "from 0 to 7", "-1": "from 0 to 7", "debug": "whole number", "": "whole number"},
		},
		"flux-path": {
			good: []string{"/usr", "/opt/flux", "/opt/flux-0.88.0/x_y+z"},
			bad:  map[string]string{"": "absolute prefix", "usr": "absolute prefix", "/": "absolute prefix", "/opt/": "absolute prefix", "/opt/../etc": "absolute prefix", "/opt/./x": "absolute prefix", "/opt/$(id)": "absolute prefix", "/opt/a b": "absolute prefix", "/" + strings.Repeat("a", 256): "absolute prefix"},
		},
		"setup": {
			good: []string{". /opt/intel/oneapi/setvars.sh", "export A=1\nmodule load x\n", "echo 'it''s $HOME'"},
			bad:  map[string]string{"": "is empty", " \n": "is empty", "a\x00b": "NUL", "\xff": "UTF-8", strings.Repeat("#", 64<<10+1): "at most 65536"},
		},
		"launcher": {
			good: []string{"true", "false"},
			bad:  map[string]string{"True": `"true" or "false"`, "yes": `"true" or "false"`, "": `"true" or "false"`},
		},
		"network-policy": {
			good: []string{"true", "false"},
			bad:  map[string]string{"True": `"true" or "false"`, "yes": `"true" or "false"`, "": `"true" or "false"`},
		},
		"queues": {
			good: []string{"true", "false"},
			bad:  map[string]string{"True": `"true" or "false"`, "1": `"true" or "false"`, "": `"true" or "false"`},
		},
		"run-options": {
			good: []string{"", "-o pmi=pmix", "--exclusive", "-o cpu-affinity=per-task -o gpu-affinity=per-task", "--setattr=a.b=c", "-S user.duration=1", "-opmi=pmix", "-o=pmi=pmix", "-ux", "-vopmi=pmix", "--env=A=1 -l"},
			bad: map[string]string{
				"-o pmi=pmix;id":    "may only contain",
				"-o $(id)":          "may only contain",
				"-o 'x'":            "may only contain",
				"-o\tx":             "may only contain",
				"-o x\n":            "may only contain",
				"-o x\r":            "may only contain",
				"-o %h":             "may only contain",
				"hostname":          "must start with an option",
				"-N 2":              "must not set -N",
				"-N2":               "must not set -N",
				"--nodes=2":         "must not set --nodes",
				"-n 4":              "must not set -n",
				"-g1":               "must not set -g",
				"--gpus-per-task=1": "must not set --gpus-per-task",
				"-o x -- y":         `must not contain "--"`,
				// Issue 14, point 7: a positional word became the program
				// flux runs; computed options slipped through other spellings.
				"-v /bin/echo HIJACKED":   "flux run would take it for the command",
				"-o x y":                  "flux run would take it for the command",
				"-u cmd":                  "flux run would take it for the command",
				"-N=3":                    "must not set -N",
				"-n=64":                   "must not set -n",
				"-c2":                     "must not set -c",
				"-g=1":                    "must not set -g",
				"-vN3":                    "must not set -N",
				"-uxn4":                   "must not set -n",
				"-N-not":                  "must not set -N",
				"--node=3":                "is not a flux run option",
				"--ntask=4":               "is not a flux run option",
				"--cores=4":               "must not set --cores",
				"--tasks-per-core=1":      "must not set --tasks-per-core",
				"-o":                      "needs a value",
				"-o -N3":                  "needs a value",
				"--setopt=-N3":            "needs a value",
				"--exclusive=yes":         "takes no value",
				"-z":                      "is not a flux run option",
				strings.Repeat("-x ", 65): "at most 64",
			},
		},
		"time-limit": {
			good: []string{"30m", "2h", "1.5d", "90", "45s", "0.5h"},
			bad:  map[string]string{"0": "longer than zero", "0s": "longer than zero", "inf": "Flux duration", "30 m": "Flux duration", "1w": "Flux duration", "-1h": "Flux duration", "": "Flux duration", "1h;id": "Flux duration", long: "Flux duration"},
		},
		"start-timeout": {
			good: []string{"10m", "600", "90s", "1h", "0", "none", "168h"},
			bad:  map[string]string{"": "whole number", "1.5m": "whole number", "10 m": "whole number", "-1m": "whole number", "+5": "whole number", "1d": "whole number", "m": "whole number", "None": "whole number", "169h": "at most a week", "99999999999999999999": "whole number", "1m;id": "whole number"},
		},
		"deadline": {
			good: []string{"30m", "2h", "1.5d", "90", "45s", "500ms", "366d"},
			bad:  map[string]string{"0": "longer than zero", "0s": "longer than zero", "inf": "duration", "30 m": "duration", "1w": "duration", "-1h": "duration", "": "duration", "1h;id": "duration", "367d": "at most a year", long: "duration"},
		},
		"min-size": {
			good: []string{"1", "2", "workers=2", "workers=1, head=1", "a=1000000"},
			bad:  map[string]string{"0": "list of <replicatedJob>=<pods>", "": "list of <replicatedJob>=<pods>", "two": "list of <replicatedJob>=<pods>", "w=0": "from 1 to 1000000", "w=1000001": "from 1 to 1000000", "w=x": "whole number", "w=1,w=2": `gives replicatedJob "w" twice`, "W=1": "not a replicatedJob name", "=2": "not a replicatedJob name", "w=1;id": "whole number", "w=1,,x=2": "list of <replicatedJob>=<pods>", " 2": "list of <replicatedJob>=<pods>"},
		},
		"max-size": {
			good: []string{"8", "workers=8,head=1"},
			bad:  map[string]string{"-1": "list of <replicatedJob>=<pods>", "w=+1": "whole number", "1-2": "list of <replicatedJob>=<pods>", "w=1\nx": "whole number"},
		},
		"curve-secret": {
			good: []string{"my-secret", "a.b-c", "x"},
			bad:  map[string]string{"": "Secret name", "My_Secret": "Secret name", "a/b": "Secret name", strings.Repeat("a", 254): "Secret name"},
		},
		"state-claim": {
			good: []string{"flux-state", "a.b-c", "x"},
			bad:  map[string]string{"": "PersistentVolumeClaim name", "Flux_State": "PersistentVolumeClaim name", "a/b": "PersistentVolumeClaim name", "-a": "PersistentVolumeClaim name", strings.Repeat("a", 254): "PersistentVolumeClaim name"},
		},
		"infra-restarts": {
			good: []string{"0", "1", "3", "1000"},
			bad:  map[string]string{"-1": "from 0 to 1000", "1001": "from 0 to 1000", "x": "", "": ""},
		},
		"owner-references": {
			good: []string{"true", "false"},
			bad:  map[string]string{"yes": "", "": ""},
		},
		"shm-size": {
			good: []string{"1Gi", "512Mi", "1G", "100M", "1"},
			bad:  map[string]string{"0": "larger than zero", "-1Gi": "larger than zero", "lots": "size like 1Gi", "1 Gi": "size like 1Gi", "": "size like 1Gi", long: "size like 1Gi", "1Gi;id": "size like 1Gi"},
		},
	}
	names := settings.Names()
	if len(names) != len(cases) {
		t.Errorf("%d settings, %d tested", len(names), len(cases))
	}
	for _, name := range names {
		c, ok := cases[name]
		if !ok {
			t.Errorf("setting %s is not tested", name)
			continue
		}
		for _, v := range c.good {
			if err := settings.Check(name, v); err != nil {
				t.Errorf("%s=%q: %v", name, v, err)
			}
		}
		for v, phrase := range c.bad {
			start := cputime.Now()
			err := settings.Check(name, v)
			if d := cputime.Since(start); d > time.Second {
				t.Errorf("%s: checking a %d-byte value took %v", name, len(v), d)
			}
			if err == nil {
				t.Errorf("%s=%q accepted", name, v)
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, phrase) {
				t.Errorf("%s=%q: %q does not say %q", name, v, msg, phrase)
			}
			if strings.ContainsFunc(msg, unicode.IsControl) || len(msg) > 1024 {
				t.Errorf("%s: the message holds a control character or is %d bytes long: %q", name, len(msg), msg[:min(len(msg), 200)])
			}
		}
	}
}

// A megabyte in any setting is refused at once, and not echoed.
func TestMegabyteValue(t *testing.T) {
	for _, long := range []string{strings.Repeat("9", 1<<20), strings.Repeat("a", 1<<20), "-" + strings.Repeat("o", 1<<20)} {
		for _, name := range settings.Names() {
			start := cputime.Now()
			err := settings.Check(name, long)
			if d := cputime.Since(start); d > time.Second {
				t.Errorf("%s: %v for a megabyte", name, d)
			}
			if err == nil {
				t.Errorf("%s accepts a megabyte", name)
			} else if len(err.Error()) > 1024 {
				t.Errorf("%s: a %d-byte message", name, len(err.Error()))
			}
		}
	}
}

// Unknown names get a suggestion when one is close, and are never echoed
// at length.
func TestUnknownNames(t *testing.T) {
	err := settings.Check("task-per-node", "2")
	if err == nil || !strings.Contains(err.Error(), `did you mean "tasks-per-node"`) {
		t.Errorf("got %v", err)
	}
	err = settings.Check("zzzzzzzzzzzzzzzzz", "2")
	if err == nil || !strings.Contains(err.Error(), "known settings: view-image") {
		t.Errorf("got %v", err)
	}
	long := strings.Repeat("x", 1<<20) + "\n[error] forged"
	if err := settings.Check(long, "1"); err == nil || len(err.Error()) > 2048 || strings.Contains(err.Error(), "\n") {
		t.Errorf("a long unknown name is echoed: %d bytes", len(err.Error()))
	}
	_, found := settings.AnnotationLayer(map[string]string{settings.AnnotationPrefix + long: "1"})
	if len(found) != 1 || len(found[0].Message) > 2048 || strings.Contains(found[0].Message, "\n") {
		t.Errorf("a long unknown annotation is echoed: %+v", found)
	}
}

// Later layers win; an invalid value is an error at its own path and the
// setting keeps the value of the layer below.
func TestResolveLayers(t *testing.T) {
	config := settings.Layer{Kind: settings.FromConfig, Values: map[string]settings.Raw{
		"port":           {Value: "9000", Path: "data.port"},
		"network-device": {Value: "ib0", Path: "data.network-device"},
	}}
	env := settings.Layer{Kind: settings.FromEnv, Values: map[string]settings.Raw{
		"network-device": {Value: "eth1", Path: "spec.env[0].value"},
	}}
	ann := settings.Layer{Kind: settings.FromAnnotation, Values: map[string]settings.Raw{
		"port":      {Value: "70000", Path: "metadata.annotations[flux-framework.org/port]"},
		"topology":  {Value: "binomial", Path: "metadata.annotations[flux-framework.org/topology]"},
		"not-there": {Value: "x", Path: "metadata.annotations[flux-framework.org/not-there]"},
	}}
	s, found := resolve(config, env, ann)
	if s.Port != 9000 || s.NetworkDevice != "eth1" || s.Topology != "binomial" || s.QueuePolicy != "fcfs" {
		t.Errorf("resolved %+v", s)
	}
	if s.Origin("network-device") != "spec.env[0].value" || s.Origin("port") != "data.port" || s.Origin("queue-policy") != "" {
		t.Errorf("origins: %q %q %q", s.Origin("network-device"), s.Origin("port"), s.Origin("queue-policy"))
	}
	var paths []string
	for _, f := range found {
		paths = append(paths, f.Path)
		if f.Path == "metadata.annotations[flux-framework.org/port]" && (f.Current != "70000" || !strings.Contains(f.Message, "invalid port from the annotation")) {
			t.Errorf("port finding: %+v", f)
		}
	}
	slices.Sort(paths)
	if want := []string{"metadata.annotations[flux-framework.org/not-there]", "metadata.annotations[flux-framework.org/port]"}; !slices.Equal(paths, want) {
		t.Errorf("findings at %q, want %q", paths, want)
	}
}

// Annotations outside the prefix are ignored; the enabled marker is not a
// setting; every other name under the prefix must be known.
func TestAnnotationLayer(t *testing.T) {
	layer, found := settings.AnnotationLayer(map[string]string{
		settings.EnabledAnnotation:          "true",
		"example.com/port":                  "x",
		settings.AnnotationPrefix + "port":  "8051",
		settings.AnnotationPrefix + "ports": "8051",
		settings.AnnotationPrefix + "Port":  "8051",
		"flux-framework.org.evil/port":      "x",
	})
	if len(layer.Values) != 1 || layer.Values["port"].Value != "8051" {
		t.Errorf("values %+v", layer.Values)
	}
	if len(found) != 2 {
		t.Errorf("findings %+v", found)
	}
	for _, f := range found {
		if !strings.Contains(f.Message, `did you mean "port"`) {
			t.Errorf("no suggestion: %s", f.Message)
		}
	}
}

// The JobSetFlux fields and the setting names map one to one, and every
// field has one of the four types a JobSetFlux spec uses.
func TestFieldNames(t *testing.T) {
	if got, want := len(settings.Fields()), len(settings.Names()); got != want {
		t.Errorf("%d fields for %d settings", got, want)
	}
	for i, name := range settings.Names() {
		field := fieldName(name)
		back, typ, ok := settings.OfField(field)
		if field == "" || !ok || back != name || settings.Fields()[i] != field {
			t.Errorf("%s -> %q -> %q", name, field, back)
		}
		switch typ {
		case settings.String, settings.Integer, settings.Boolean, settings.CommaList, settings.WordList:
		default:
			t.Errorf("%s has the type %+v", name, typ)
		}
	}
	if _, _, ok := settings.OfField("taskPerNode"); ok {
		t.Error("an unknown field resolves")
	}
	for env, name := range settings.EnvNames {
		if !strings.HasPrefix(env, "FLUX_") || !slices.Contains(settings.Names(), name) {
			t.Errorf("env %s -> %s", env, name)
		}
	}
}

// The layers' precedence does not depend on the order they are applied
// in, and every value is checked, also one a higher layer overrides.
func TestApplyOrder(t *testing.T) {
	env := settings.Layer{Kind: settings.FromEnv, Values: map[string]settings.Raw{
		"network-device": {Value: "eth1", Path: "env.device"},
		"queue-policy":   {Value: "easy", Path: "env.policy"},
		"view-image":     {Value: "Bad:$(id)", Path: "env.image"},
	}}
	ann := settings.Layer{Kind: settings.FromAnnotation, Values: map[string]settings.Raw{
		"network-device": {Value: "ib0", Path: "ann.device"},
		"view-image":     {Value: "example.com/view:1", Path: "ann.image"},
	}}
	config := settings.Layer{Kind: settings.FromConfig, Values: map[string]settings.Raw{
		"queue-policy": {Value: "hybrid", Path: "config.policy"},
	}}
	base, _ := resolve(config)
	s := base
	annFound := s.Apply(ann)
	envFound := s.Apply(env)
	if len(annFound) != 0 || len(envFound) != 1 || envFound[0].Path != "env.image" || !strings.Contains(envFound[0].Message, "invalid view-image from the container environment") {
		t.Errorf("findings %+v %+v, want one error at env.image", annFound, envFound)
	}
	if s.NetworkDevice != "ib0" || s.QueuePolicy != "easy" || s.ViewImage != "example.com/view:1" {
		t.Errorf("got device %q, policy %q, image %q; want the annotation's, the env's, the annotation's", s.NetworkDevice, s.QueuePolicy, s.ViewImage)
	}
	if s.Origin("network-device") != "ann.device" || s.Origin("queue-policy") != "env.policy" {
		t.Errorf("origins %q %q", s.Origin("network-device"), s.Origin("queue-policy"))
	}
	// Applying to a copy leaves the original as it was.
	if base.QueuePolicy != "hybrid" || base.Origin("queue-policy") != "config.policy" || base.Origin("network-device") != "" {
		t.Errorf("the base changed: %+v", base)
	}
}

// resolve applies the layers over the defaults, in the order given.
func resolve(layers ...settings.Layer) (settings.Settings, finding.List) {
	s := settings.Defaults()
	var found finding.List
	for _, layer := range layers {
		found.Add(s.Apply(layer))
	}
	return s, found
}

// fieldName is the JobSetFlux spec field of a setting name, "" for none.
func fieldName(name string) string {
	for _, field := range settings.Fields() {
		if n, _, _ := settings.OfField(field); n == name {
			return field
		}
	}
	return ""
}

// TestStartTimeoutSeconds: start-timeout reaches the plan in seconds, with
// its default ten minutes and 0 for none.
func TestStartTimeoutSeconds(t *testing.T) {
	if got := settings.Defaults().StartTimeout; got != 600 {
		t.Errorf("default start-timeout is %d s, want 600", got)
	}
	for raw, want := range map[string]int{"600": 600, "90s": 90, "10m": 600, "2h": 7200, "0": 0, "none": 0} {
		s := settings.Defaults()
		if found := s.Apply(settings.Layer{Kind: settings.FromAnnotation, Values: map[string]settings.Raw{"start-timeout": {Value: raw, Path: "ann"}}}); found.HasErrors() {
			t.Errorf("start-timeout %q: %v", raw, found)
			continue
		}
		if s.StartTimeout != want {
			t.Errorf("start-timeout %q is %d s, want %d", raw, s.StartTimeout, want)
		}
	}
}
