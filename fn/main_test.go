package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/internal/testenv"
	"github.com/jobset-flux/jobset-flux/pkg/curve"
	"github.com/jobset-flux/jobset-flux/pkg/jobsetrender"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// testSeed makes the generated CURVE keys reproducible in these tests.
const testSeed = "hostile-input-test-seed-0123456789abcdef"

// The objects every catalogue case carries besides the bad input: an
// unrelated Deployment (must come out byte-identical) and a valid Flux
// JobSet (must still be rendered, unless the whole config is bad).
const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  annotations:
    flux-framework.org/enabled: "true" # not a JobSet: ignored
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        command: [nginx, -g, "daemon off;"]
`

const goodJobSet = `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: good
  namespace: default
  annotations:
    flux-framework.org/enabled: "true"
spec:
  replicatedJobs:
  - name: w
    replicas: 1
    template:
      spec:
        completions: 2
        template:
          spec:
            containers:
            - name: app
              image: busybox:1.36
              command: [sh, -c, "echo hello"]
`

// badJobSet is valid until a case edits it.
const badJobSet = `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: bad
  namespace: default
  annotations:
    flux-framework.org/enabled: "true"
spec:
  replicatedJobs:
  - name: w
    replicas: 2
    template:
      spec:
        completions: 2
        template:
          spec:
            containers:
            - name: app
              image: busybox:1.36
              command: [sh, -c, 'echo $(hostname)']
`

// scope says what a bad input is allowed to affect.
type scope int

const (
	// Only the bad JobSet is refused: it comes out byte-identical, the
	// good JobSet is rendered, the Deployment is untouched.
	scopeJobSet scope = iota
	// The bad JobSet and an existing CURVE Secret of it are refused.
	scopeSecret
	// The function config is bad: nothing is rendered, every item comes
	// out byte-identical.
	scopeConfig
	// The input is not a usable ResourceList: nothing is written to
	// stdout, stderr says why.
	scopeList
	// The input is valid.
	scopeOK
)

// edit sets (or with value "~delete" removes) the node at a dotted path
// of the bad JobSet; numeric parts index lists (the length appends).
type edit struct{ path, value string }

type hostileCase struct {
	name string
	// ann sets annotations on the bad JobSet ("~delete" removes one).
	ann   map[string]string
	edits []edit
	// config is the function config ("" for none).
	config string
	// extra items, after the standard ones.
	extra []string
	// raw replaces the whole input; corrupt rewrites the standard one.
	raw     string
	corrupt func(std string) string
	exit    int
	scope   scope
	// The error result expected: resourceRef kind/name, field path, and a
	// phrase of the message that says what to change.
	kind, ref, field, phrase string
}

func (c hostileCase) refKind() string {
	if c.kind == "" {
		return "JobSet"
	}
	return c.kind
}

func (c hostileCase) refName() string {
	if c.ref == "" && c.scope == scopeJobSet {
		return "bad"
	}
	return c.ref
}

const (
	rj0  = "spec.replicatedJobs[0]"
	job0 = rj0 + ".template.spec"
	pod0 = job0 + ".template.spec"
	c0   = pod0 + ".containers[0]"
)

func ann(name string) string { return "metadata.annotations[flux-framework.org/" + name + "]" }

// certWith returns a certificate whose public key belongs to another
// secret key: it parses, but the keys do not match.
func mismatchedCert(t *testing.T) string {
	a, err := curve.Derive([]byte(testSeed), "a/a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := curve.Derive([]byte(testSeed), "b/b")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := a.Certificate("bad")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(cert), a.PublicZ85(), b.PublicZ85(), 1)
}

// validCert returns the certificate the test seed derives for namespace/name.
func validCert(t *testing.T, id string) string {
	keys, err := curve.Derive([]byte(testSeed), id)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := keys.Certificate(id[strings.IndexByte(id, '/')+1:])
	if err != nil {
		t.Fatal(err)
	}
	return string(cert)
}

// indentBy prefixes every line of text.
func indentBy(text, prefix string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if line != "" {
			b.WriteString(prefix + line)
		}
	}
	return b.String()
}

func secretDoc(data string) string {
	return `apiVersion: v1
kind: Secret
metadata:
  name: bad-flux-curve
  namespace: default
type: Opaque
data:
  curve.cert: ` + data + "\n"
}

func catalogue(t *testing.T) []hostileCase {
	const rl = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
	secondRJ := func(envValue string) edit {
		return edit{"spec.replicatedJobs.1", `{name: v, replicas: 1, template: {spec: {completions: 1, template: {spec: {containers: [{name: app, image: busybox, command: [sleep, "1"], env: [{name: FLUX_NETWORK_DEVICE, value: "` + envValue + `"}]}]}}}}}`}
	}
	return []hostileCase{
		// The ResourceList itself.
		{name: "malformed YAML", corrupt: appendText("- apiVersion: v1\n  kind: [\n"), exit: 1, scope: scopeList, phrase: "not a ResourceList"},
		{name: "tab-indented YAML", corrupt: appendText("\t- kind: ConfigMap\n"), exit: 1, scope: scopeList, phrase: "not a ResourceList"},
		{name: "not a ResourceList", raw: deployment + "---\n" + goodJobSet + "---\n" + badJobSet, exit: 1, scope: scopeList, phrase: "kind: ResourceList"},
		{name: "wrong ResourceList kind", corrupt: replaceText("kind: ResourceList\n", "kind: ResourceLists\n"), exit: 1, scope: scopeList, phrase: "kind: ResourceList"},
		{name: "wrong ResourceList apiVersion", corrupt: replaceText("apiVersion: config.kubernetes.io/v1\nkind: ResourceList", "apiVersion: config.kubernetes.io/v2\nkind: ResourceList"), exit: 1, scope: scopeList, phrase: "apiVersion: config.kubernetes.io/v1"},
		{name: "missing ResourceList apiVersion", corrupt: replaceText("apiVersion: config.kubernetes.io/v1\nkind: ResourceList", "kind: ResourceList"), exit: 1, scope: scopeList, phrase: "apiVersion: config.kubernetes.io/v1"},
		{name: "items is a map", raw: rl + "items: {a: b}\n", exit: 1, scope: scopeList, phrase: "items"},
		{name: "item is a number", corrupt: appendText("- 1\n"), exit: 1, scope: scopeList, phrase: "items"},
		{name: "empty document", raw: "", exit: 1, scope: scopeList, phrase: "not a ResourceList"},
		{name: "non-UTF-8 bytes", corrupt: replaceText("name: bad\n", "name: bad\xff\xfe\n"), exit: 1, scope: scopeList, phrase: "not a ResourceList"},
		{name: "NUL byte", corrupt: replaceText("name: bad\n", "name: bad\x00\n"), exit: 1, scope: scopeList, phrase: "not a ResourceList"},
		// Issue 14, point 9: messages instead of the SDK's internals, and the
		// apiVersion read from the tree, not from a line of a scalar.
		{name: "items is a number", raw: rl + "items: 5\n", exit: 1, scope: scopeList, phrase: "items is a !!int"},
		{name: "functionConfig is a list", raw: rl + "items: []\nfunctionConfig: [a]\n", exit: 1, scope: scopeList, phrase: "functionConfig is a list"},
		{name: "apiVersion line inside a flow scalar", raw: "{apiVersion: config.kubernetes.io/v2, kind: ResourceList, x: \"a\n\napiVersion: config.kubernetes.io/v1\n\", items: []}\n", exit: 1, scope: scopeList, phrase: "apiVersion: config.kubernetes.io/v1"},
		{name: "two YAML documents", raw: rl + "items: []\n---\n" + rl + "items: []\n", exit: 1, scope: scopeList, phrase: "more than one YAML document"},
		// Issue 14, point 3.
		{name: "two items keys", corrupt: appendText("items:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n"), exit: 1, scope: scopeList, phrase: `the key "items" appears twice`},
		{name: "two functionConfig keys", config: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flux}\n", corrupt: appendText("functionConfig: {apiVersion: v1, kind: ConfigMap, data: {port: \"1\"}}\n"), exit: 1, scope: scopeList, phrase: `the key "functionConfig" appears twice`},
		{name: "empty ResourceList", raw: rl + "items: []\n", exit: 0, scope: scopeOK},
		{name: "ResourceList without items", raw: rl, exit: 0, scope: scopeOK},

		// Missing or null structure.
		{name: "missing spec", edits: []edit{{"spec", "~delete"}}, exit: 1, field: "spec", phrase: "no spec"},
		{name: "null spec", edits: []edit{{"spec", "null"}}, exit: 1, field: "spec", phrase: "no spec"},
		{name: "missing replicatedJobs", edits: []edit{{"spec.replicatedJobs", "~delete"}}, exit: 1, field: "spec.replicatedJobs", phrase: "no replicatedJobs"},
		{name: "null replicatedJobs", edits: []edit{{"spec.replicatedJobs", "null"}}, exit: 1, field: "spec.replicatedJobs", phrase: "no replicatedJobs"},
		{name: "empty replicatedJobs", edits: []edit{{"spec.replicatedJobs", "[]"}}, exit: 1, field: "spec.replicatedJobs", phrase: "no replicatedJobs"},
		{name: "missing Job template", edits: []edit{{"spec.replicatedJobs.0.template", "~delete"}}, exit: 1, field: job0, phrase: "no Job template spec"},
		{name: "null pod template spec", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec", "null"}}, exit: 1, field: pod0, phrase: "no pod template spec"},
		{name: "missing containers", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers", "~delete"}}, exit: 1, field: pod0 + ".containers", phrase: "no containers"},
		{name: "empty containers", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers", "[]"}}, exit: 1, field: pod0 + ".containers", phrase: "no containers"},
		{name: "missing name", edits: []edit{{"metadata.name", "~delete"}}, exit: 1, ref: "-", field: "metadata.name", phrase: "has no name"},

		// Wrong types.
		{name: "string replicas", edits: []edit{{"spec.replicatedJobs.0.replicas", `"3"`}}, exit: 1, field: rj0 + ".replicas", phrase: "must be a whole number"},
		{name: "float completions", edits: []edit{{"spec.replicatedJobs.0.template.spec.completions", `2.5`}}, exit: 1, field: job0 + ".completions", phrase: "must be a whole number"},
		{name: "list where a map is expected", edits: []edit{{"spec.replicatedJobs.0.template", "[a, b]"}}, exit: 1, field: rj0 + ".template", phrase: "must be a map"},
		{name: "map where a list is expected", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers", "{name: app, image: busybox}"}}, exit: 1, field: pod0 + ".containers", phrase: "must be a list"},
		{name: "number in command", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.command", "[sleep, 5]"}}, exit: 1, field: c0 + ".command[1]", phrase: "must be a string (quote it)"},
		{name: "map in args", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.args", "[{a: b}]"}}, exit: 1, field: c0 + ".args[0]", phrase: "must be a string (quote it)"},
		{name: "string hostNetwork", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.hostNetwork", `"false"`}}, exit: 1, field: pod0 + ".hostNetwork", phrase: "must be true or false"},
		{name: "replicatedJob is a string", edits: []edit{{"spec.replicatedJobs.0", `w`}}, exit: 1, field: rj0, phrase: "must be a map"},
		{name: "annotation value not a string", ann: map[string]string{"flux-framework.org/tasks-per-node": "4"}, edits: []edit{{"metadata.annotations.flux-framework.org/tasks-per-node", "4"}}, exit: 1, field: ann("tasks-per-node"), phrase: "quote it"},

		{name: "duplicate key", edits: []edit{{"spec.replicatedJobs.0.replicas", "~dup 1000"}}, exit: 1, field: rj0 + ".replicas", phrase: "appears twice in the same map"},
		{name: "duplicate annotation", ann: map[string]string{"flux-framework.org/enabled": "false"}, edits: []edit{{"metadata.annotations.flux-framework.org/enabled", `~dup "true"`}}, exit: 1, field: "metadata.annotations[flux-framework.org/enabled]", phrase: "appears twice in the same map"},

		// Counts.
		{name: "zero replicas", edits: []edit{{"spec.replicatedJobs.0.replicas", "0"}}, exit: 1, field: rj0 + ".replicas", phrase: "at least 1"},
		{name: "negative replicas", edits: []edit{{"spec.replicatedJobs.0.replicas", "-3"}}, exit: 1, field: rj0 + ".replicas", phrase: "at least 1"},
		{name: "replicas beyond int32", edits: []edit{{"spec.replicatedJobs.0.replicas", "3000000000"}}, exit: 1, field: rj0 + ".replicas", phrase: "fits in 32 bits"},
		{name: "replicas beyond int64", edits: []edit{{"spec.replicatedJobs.0.replicas", "99999999999999999999999"}}, exit: 1, field: rj0 + ".replicas", phrase: "must be a whole number"},
		{name: "over a million brokers", edits: []edit{{"spec.replicatedJobs.0.replicas", "1001"}, {"spec.replicatedJobs.0.template.spec.completions", "1000"}}, exit: 1, field: rj0, phrase: "split it into several JobSets"},
		{name: "int32 replicas and completions", edits: []edit{{"spec.replicatedJobs.0.replicas", "2147483647"}, {"spec.replicatedJobs.0.template.spec.completions", "2147483647"}}, exit: 1, field: rj0, phrase: "split it into several JobSets"},
		{name: "completions over a million", edits: []edit{{"spec.replicatedJobs.0.replicas", "1"}, {"spec.replicatedJobs.0.template.spec.completions", "1000001"}}, exit: 1, field: rj0, phrase: "split it into several JobSets"},
		{name: "completions beyond int32", edits: []edit{{"spec.replicatedJobs.0.template.spec.completions", "2147483648"}}, exit: 1, field: job0 + ".completions", phrase: "fits in 32 bits"},
		{name: "parallelism beyond int32", edits: []edit{{"spec.replicatedJobs.0.template.spec.parallelism", "-2147483649"}}, exit: 1, field: job0 + ".parallelism", phrase: "fits in 32 bits"},
		{name: "zero completions", edits: []edit{{"spec.replicatedJobs.0.template.spec.completions", "0"}}, exit: 1, field: job0 + ".completions", phrase: "at least 1"},
		{name: "negative completions", edits: []edit{{"spec.replicatedJobs.0.template.spec.completions", "-2"}}, exit: 1, field: job0 + ".completions", phrase: "at least 1"},
		{name: "zero parallelism", edits: []edit{{"spec.replicatedJobs.0.template.spec.parallelism", "0"}}, exit: 1, field: job0 + ".parallelism", phrase: "must equal completions (2)"},
		{name: "parallelism below completions", edits: []edit{{"spec.replicatedJobs.0.template.spec.parallelism", "1"}}, exit: 1, field: job0 + ".parallelism", phrase: "must equal completions (2)"},
		{name: "negative parallelism alone", edits: []edit{{"spec.replicatedJobs.0.template.spec.completions", "~delete"}, {"spec.replicatedJobs.0.template.spec.parallelism", "-1"}}, exit: 1, field: job0 + ".completions", phrase: "at least 1"},
		{name: "negative backoffLimit", edits: []edit{{"spec.replicatedJobs.0.template.spec.backoffLimit", "-1"}}, exit: 1, field: job0 + ".backoffLimit", phrase: "must not be negative"},

		// Names and pod shape.
		{name: "invalid JobSet name", edits: []edit{{"metadata.name", "Bad"}}, exit: 1, ref: "Bad", field: "metadata.name", phrase: "must be a DNS-1035 label"},
		{name: "replicatedJob name with a comma", edits: []edit{{"spec.replicatedJobs.0.name", "'w,evil-0-0'"}}, exit: 1, field: rj0 + ".name", phrase: "must be a DNS-1035 label"},
		{name: "replicatedJob name with brackets", edits: []edit{{"spec.replicatedJobs.0.name", "'w[0-9]'"}}, exit: 1, field: rj0 + ".name", phrase: "must be a DNS-1035 label"},
		{name: "upper-case replicatedJob name", edits: []edit{{"spec.replicatedJobs.0.name", "W"}}, exit: 1, field: rj0 + ".name", phrase: "must be a DNS-1035 label"},
		{name: "annotation key forging a result line", ann: map[string]string{"flux-framework.org/x\n[error] forged": "1"}, exit: 1, field: "metadata.annotations[flux-framework.org/x\n[error] forged]", phrase: "unknown setting annotation"},
		{name: "hostname too long", edits: []edit{{"spec.replicatedJobs.0.name", "a-replicated-job-name-that-is-far-too-long-for-a-host"}}, exit: 1, field: "metadata.name", phrase: "shorten the JobSet name"},
		{name: "invalid subdomain", edits: []edit{{"spec.network", "{subdomain: Bad_Sub}"}}, exit: 1, field: "spec.network.subdomain", phrase: "DNS-1035 label"},
		{name: "subdomain starting with a digit", edits: []edit{{"spec.network", "{subdomain: 1net}"}}, exit: 1, field: "spec.network.subdomain", phrase: "starting with a letter"},
		{name: "DNS hostnames off", edits: []edit{{"spec.network", "{enableDNSHostnames: false}"}}, exit: 1, field: "spec.network.enableDNSHostnames", phrase: "set it to true"},
		{name: "NonIndexed job", edits: []edit{{"spec.replicatedJobs.0.template.spec.completionMode", "NonIndexed"}}, exit: 1, field: job0 + ".completionMode", phrase: "must be Indexed"},
		{name: "hostNetwork", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.hostNetwork", "true"}}, exit: 1, field: pod0 + ".hostNetwork", phrase: "must be false"},
		{name: "setHostnameAsFQDN", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.setHostnameAsFQDN", "true"}}, exit: 1, field: pod0 + ".setHostnameAsFQDN", phrase: "must be false"},
		{name: "restartPolicy Always", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.restartPolicy", "Always"}}, exit: 1, field: pod0 + ".restartPolicy", phrase: "must be Never or OnFailure"},
		{name: "existing flux-installer init container", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.initContainers", "[{name: flux-installer, image: busybox}]"}}, exit: 1, field: pod0 + ".initContainers[0].name", phrase: "rename yours"},
		{name: "colliding volume name", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.volumes", "[{name: flux-install, emptyDir: {}}]"}}, exit: 1, field: pod0 + ".volumes[0].name", phrase: "rename yours"},
		{name: "colliding volumeMount name", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.volumeMounts", "[{name: flux-config, mountPath: /data}]"}}, exit: 1, field: c0 + ".volumeMounts[0].name", phrase: "rename yours"},
		{name: "mount at /mnt/flux/config", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.volumeMounts", "[{name: cfg, mountPath: /mnt/flux/config}]"}}, exit: 1, field: c0 + ".volumeMounts[0].mountPath", phrase: "mount it elsewhere"},
		{name: "mount at /opt/software/", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.volumeMounts", "[{name: sw, mountPath: /opt/software/}]"}}, exit: 1, field: c0 + ".volumeMounts[0].mountPath", phrase: "mount it elsewhere"},
		{name: "mount above /mnt/flux", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.volumeMounts", "[{name: m, mountPath: /mnt}]"}}, exit: 1, field: c0 + ".volumeMounts[0].mountPath", phrase: "mount it elsewhere"},
		// Issue 14, point 9: paths are compared as the kubelet resolves them;
		// init and app containers share one namespace of names.
		{name: "mount at /mnt//flux/config", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.volumeMounts", "[{name: cfg, mountPath: /mnt//flux/config}]"}}, exit: 1, field: c0 + ".volumeMounts[0].mountPath", phrase: "mount it elsewhere"},
		{name: "mount at /opt/x/../software", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.volumeMounts", "[{name: sw, mountPath: /opt/x/../software}]"}}, exit: 1, field: c0 + ".volumeMounts[0].mountPath", phrase: "mount it elsewhere"},
		{name: "app container named flux-installer", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.name", "flux-installer"}}, exit: 1, field: c0 + ".name", phrase: "rename yours"},
		// Issue 14, point 6: only what the function wrote is taken for an
		// earlier rendering; a command that starts with the entrypoint
		// does not make the user's objects of its names the function's.
		{name: "entrypoint in the command with own flux-installer and flux-config", edits: []edit{
			{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.command", "[/mnt/flux/config/entrypoint.sh, sh, -c, 'echo hi']"},
			{"spec.replicatedJobs.0.template.spec.template.spec.initContainers", "[{name: flux-installer, image: busybox, command: [sh, -c, 'echo mine']}]"},
			{"spec.replicatedJobs.0.template.spec.template.spec.volumes", "[{name: flux-config, emptyDir: {}}]"}},
			exit: 1, field: pod0 + ".initContainers[0].name", phrase: "rename yours"},
		{name: "entrypoint in the command alone", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.command", "[/mnt/flux/config/entrypoint.sh, sh]"}}, exit: 1, field: c0 + ".command[0]", phrase: "remove it from the command"},
		{name: "unknown replicated-jobs", ann: map[string]string{"flux-framework.org/replicated-jobs": "w,workers"}, exit: 1, field: ann("replicated-jobs"), phrase: "list only those"},
		{name: "unknown container", ann: map[string]string{"flux-framework.org/container": "main"}, exit: 1, field: pod0 + ".containers", phrase: "set flux-framework.org/container to one of them"},
		{name: "fractional GPUs", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.resources", "{limits: {nvidia.com/gpu: 1500m}}"}}, exit: 1, field: c0 + ".resources.limits[nvidia.com/gpu]", phrase: "whole number of GPUs"},
		{name: "GPUs that differ across replicatedJobs", edits: []edit{
			{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.resources", "{limits: {nvidia.com/gpu: 2}}"},
			{"spec.replicatedJobs.1", `{name: v, template: {spec: {template: {spec: {containers: [{name: app, image: busybox, resources: {limits: {nvidia.com/gpu: 4}}}]}}}}}`}},
			exit: 1, field: "spec.replicatedJobs[1].template.spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]", phrase: "set flux-framework.org/gpus-per-node"},

		// Every setting, invalid.
		{name: "invalid view-image", ann: map[string]string{"flux-framework.org/view-image": "Ghcr.io/x:$(id)"}, exit: 1, field: ann("view-image"), phrase: "must be an image reference"},
		{name: "invalid tasks-per-node", ann: map[string]string{"flux-framework.org/tasks-per-node": "four"}, exit: 1, field: ann("tasks-per-node"), phrase: "must be a whole number from 1 to 4096"},
		{name: "zero tasks-per-node", ann: map[string]string{"flux-framework.org/tasks-per-node": "0"}, exit: 1, field: ann("tasks-per-node"), phrase: "must be from 1 to 4096"},
		{name: "invalid cores-per-node", ann: map[string]string{"flux-framework.org/cores-per-node": "99999999999999999999"}, exit: 1, field: ann("cores-per-node"), phrase: "whole number from 1 to 65536"},
		{name: "invalid gpus-per-node", ann: map[string]string{"flux-framework.org/gpus-per-node": "-1"}, exit: 1, field: ann("gpus-per-node"), phrase: "must be from 0 to 256"},
		{name: "invalid network-device", ann: map[string]string{"flux-framework.org/network-device": "eth0;reboot"}, exit: 1, field: ann("network-device"), phrase: "must be a network interface name"},
		// Issue 14, point 7.
		{name: "run-options naming a command", ann: map[string]string{"flux-framework.org/run-options": "-v /bin/echo HIJACKED"}, exit: 1, field: ann("run-options"), phrase: "flux run would take it for the command"},
		{name: "run-options setting -N bundled", ann: map[string]string{"flux-framework.org/run-options": "-vN3"}, exit: 1, field: ann("run-options"), phrase: "must not set -N"},
		{name: "run-options setting -n with =", ann: map[string]string{"flux-framework.org/run-options": "-n=64"}, exit: 1, field: ann("run-options"), phrase: "must not set -n"},
		{name: "invalid port", ann: map[string]string{"flux-framework.org/port": "65536"}, exit: 1, field: ann("port"), phrase: "must be from 1 to 65535"},
		{name: "invalid queue-policy", ann: map[string]string{"flux-framework.org/queue-policy": "FCFS"}, exit: 1, field: ann("queue-policy"), phrase: "must be one of fcfs, easy, conservative, hybrid"},
		{name: "invalid connect-timeout", ann: map[string]string{"flux-framework.org/connect-timeout": "5 s"}, exit: 1, field: ann("connect-timeout"), phrase: "must be a duration like 5s"},
		{name: "zero connect-timeout", ann: map[string]string{"flux-framework.org/connect-timeout": "0s"}, exit: 1, field: ann("connect-timeout"), phrase: "longer than zero"},
		{name: "invalid topology", ann: map[string]string{"flux-framework.org/topology": "kary:0"}, exit: 1, field: ann("topology"), phrase: "must be kary:K"},
		{name: "invalid replicated-jobs", ann: map[string]string{"flux-framework.org/replicated-jobs": "w,,v"}, exit: 1, field: ann("replicated-jobs"), phrase: "comma-separated list of replicatedJob names"},
		// Found by FuzzSettings (testdata/fuzz/FuzzSettings/8c7560068b3ef4b7): names were
		// trimmed of any white space, so a value with a control character was accepted.
		{name: "replicated-jobs with a form feed", ann: map[string]string{"flux-framework.org/replicated-jobs": "w\f"}, exit: 1, field: ann("replicated-jobs"), phrase: "comma-separated list of replicatedJob names"},
		{name: "duplicate replicated-jobs", ann: map[string]string{"flux-framework.org/replicated-jobs": "w,w"}, exit: 1, field: ann("replicated-jobs"), phrase: "twice"},
		{name: "invalid container", ann: map[string]string{"flux-framework.org/container": "App"}, exit: 1, field: ann("container"), phrase: "must be a container name"},
		{name: "invalid interactive", ann: map[string]string{"flux-framework.org/interactive": "yes"}, exit: 1, field: ann("interactive"), phrase: `must be "true" or "false"`},
		{name: "run-options with a newline", ann: map[string]string{"flux-framework.org/run-options": "-o pmi=pmix\n-o x"}, exit: 1, field: ann("run-options"), phrase: "may only contain"},
		{name: "invalid run-options", ann: map[string]string{"flux-framework.org/run-options": "-o pmi=pmix;id"}, exit: 1, field: ann("run-options"), phrase: "may only contain"},
		{name: "run-options setting -N", ann: map[string]string{"flux-framework.org/run-options": "-N4"}, exit: 1, field: ann("run-options"), phrase: "must not set -N"},
		{name: "run-options not an option", ann: map[string]string{"flux-framework.org/run-options": "hostname"}, exit: 1, field: ann("run-options"), phrase: "must start with an option"},
		{name: "invalid curve-secret", ann: map[string]string{"flux-framework.org/curve-secret": "My_Secret"}, exit: 1, field: ann("curve-secret"), phrase: "must be a Secret name"},
		{name: "invalid shm-size", ann: map[string]string{"flux-framework.org/shm-size": "lots"}, exit: 1, field: ann("shm-size"), phrase: "must be a size like 1Gi"},
		{name: "zero shm-size", ann: map[string]string{"flux-framework.org/shm-size": "0"}, exit: 1, field: ann("shm-size"), phrase: "larger than zero"},
		{name: "unknown setting annotation", ann: map[string]string{"flux-framework.org/task-per-node": "2"}, exit: 1, field: ann("task-per-node"), phrase: `did you mean "tasks-per-node"`},
		{name: "invalid enabled", ann: map[string]string{"flux-framework.org/enabled": "yes"}, exit: 1, field: ann("enabled"), phrase: `must be "true" or "false"`},
		{name: "tasks do not divide cores", ann: map[string]string{"flux-framework.org/tasks-per-node": "2", "flux-framework.org/cores-per-node": "3"}, exit: 1, field: ann("cores-per-node"), phrase: "must be a multiple of tasks-per-node"},
		{name: "tasks do not divide GPUs", ann: map[string]string{"flux-framework.org/tasks-per-node": "2", "flux-framework.org/gpus-per-node": "3"}, exit: 1, field: ann("gpus-per-node"), phrase: "must be a multiple of tasks-per-node"},
		{name: "interactive false with no command", ann: map[string]string{"flux-framework.org/interactive": "false"}, edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.command", "~delete"}}, exit: 1, field: c0 + ".command", phrase: "give it a command"},

		// The container environment.
		{name: "FLUX_* env with valueFrom", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.env", "[{name: FLUX_VIEW_IMAGE, valueFrom: {configMapKeyRef: {name: x, key: y}}}]"}}, exit: 1, field: c0 + ".env[0].valueFrom", phrase: "must be a literal value"},
		{name: "invalid FLUX_* env value", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.env", `[{name: FLUX_NETWORK_DEVICE, value: "eth0 && id"}]`}}, exit: 1, field: c0 + ".env[0].value", phrase: "must be a network interface name"},
		{name: "conflicting FLUX_* env across replicatedJobs", edits: []edit{{"spec.replicatedJobs.0.template.spec.template.spec.containers.0.env", `[{name: FLUX_NETWORK_DEVICE, value: eth0}]`}, secondRJ("eth1")},
			exit: 1, field: "spec.replicatedJobs[1].template.spec.template.spec.containers[0].env[0].value", phrase: "the whole instance needs one value"},

		// Objects that collide with what the function generates.
		{name: "duplicate JobSets", extra: []string{badJobSet}, exit: 1, field: "metadata.name", phrase: "keep one"},
		{name: "foreign ConfigMap of the generated name", extra: []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad-flux-entrypoint, namespace: default}\ndata: {a: b}\n"},
			exit: 1, field: "metadata.name", phrase: "rename or remove it"},
		{name: "curve Secret with bad base64", extra: []string{secretDoc("'not base64!'")}, exit: 1, scope: scopeSecret, kind: "Secret", ref: "bad-flux-curve", field: "data[curve.cert]", phrase: "is not valid base64"},
		{name: "curve Secret that is not a certificate", extra: []string{secretDoc(base64.StdEncoding.EncodeToString([]byte("hello\n")))}, exit: 1, scope: scopeSecret, kind: "Secret", ref: "bad-flux-curve", field: "data[curve.cert]", phrase: "is not a valid Flux CURVE certificate"},
		{name: "curve Secret with mismatched keys", extra: []string{secretDoc(base64.StdEncoding.EncodeToString([]byte(mismatchedCert(t))))}, exit: 1, scope: scopeSecret, kind: "Secret", ref: "bad-flux-curve", field: "data[curve.cert]", phrase: "delete the Secret"},
		// Issue 14, point 9: the API server lets stringData win over data.
		{name: "curve Secret whose stringData differs from a valid data", extra: []string{secretDoc(base64.StdEncoding.EncodeToString([]byte(validCert(t, "default/bad")))) + "stringData:\n  curve.cert: |\n" + indentBy(mismatchedCert(t), "    ")},
			exit: 1, scope: scopeSecret, kind: "Secret", ref: "bad-flux-curve", field: "stringData[curve.cert]", phrase: "lets stringData win"},
		{name: "curve Secret whose stringData is invalid", extra: []string{"apiVersion: v1\nkind: Secret\nmetadata: {name: bad-flux-curve, namespace: default}\nstringData:\n  curve.cert: |\n    hello\n"},
			exit: 1, scope: scopeSecret, kind: "Secret", ref: "bad-flux-curve", field: "stringData[curve.cert]", phrase: "is not a valid Flux CURVE certificate"},
		{name: "curve Secret without the key", extra: []string{"apiVersion: v1\nkind: Secret\nmetadata: {name: bad-flux-curve, namespace: default}\ndata: {other: YQ==}\n"}, exit: 1, scope: scopeSecret, kind: "Secret", ref: "bad-flux-curve", field: "data[curve.cert]", phrase: "is missing"},

		// The function config.
		{name: "ConfigMap config with an unknown key", config: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flux}\ndata: {tasks-per-nod: \"2\"}\n", exit: 1, scope: scopeConfig, kind: "ConfigMap", ref: "flux", field: "data.tasks-per-nod", phrase: `did you mean "tasks-per-node"`},
		{name: "ConfigMap config with an invalid value", config: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flux}\ndata: {port: \"80;id\"}\n", exit: 1, scope: scopeConfig, kind: "ConfigMap", ref: "flux", field: "data.port", phrase: "whole number from 1 to 65535"},
		{name: "ConfigMap config with a non-string value", config: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flux}\ndata: {port: {a: b}}\n", exit: 1, scope: scopeConfig, kind: "ConfigMap", ref: "flux", field: "data.port", phrase: "quote numbers"},
		// Found by FuzzProcess (testdata/fuzz/FuzzProcess/f8eeb7cbf065d922): the SDK's
		// string-map reader skipped this entry, so the first render ignored it.
		{name: "ConfigMap config with an anchored empty key", config: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flux}\ndata: {&a : [0], port: \"8050\"}\n", exit: 1, scope: scopeConfig, kind: "ConfigMap", ref: "flux", field: "data", phrase: "not a setting name"},
		{name: "ConfigMap config whose data is a list", config: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flux}\ndata: [port]\n", exit: 1, scope: scopeConfig, kind: "ConfigMap", ref: "flux", field: "data", phrase: "must map setting names to string values"},
		{name: "JobSetFlux wrong type", config: "apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: flux}\nspec: {tasksPerNode: \"4\"}\n", exit: 1, scope: scopeConfig, kind: "JobSetFlux", ref: "flux", field: "spec.tasksPerNode", phrase: "does not match the schema"},
		{name: "JobSetFlux unknown field", config: "apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: flux}\nspec: {taskPerNode: 4}\n", exit: 1, scope: scopeConfig, kind: "JobSetFlux", ref: "flux", field: "spec.taskPerNode", phrase: "does not match the schema"},
		{name: "JobSetFlux enum", config: "apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: flux}\nspec: {queuePolicy: fifo}\n", exit: 1, scope: scopeConfig, kind: "JobSetFlux", ref: "flux", field: "spec.queuePolicy", phrase: "must be one of fcfs, easy, conservative, hybrid"},
		{name: "JobSetFlux valid schema, invalid value", config: "apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: flux}\nspec: {networkDevice: \"eth0\\n[x]\"}\n", exit: 1, scope: scopeConfig, kind: "JobSetFlux", ref: "flux", field: "spec.networkDevice", phrase: "must be a network interface name"},
		{name: "JobSetFlux runOptions item of two words", config: "apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: flux}\nspec: {runOptions: [\"-o pmi=pmix\"]}\n", exit: 1, scope: scopeConfig, kind: "JobSetFlux", ref: "flux", field: "spec.runOptions[0]", phrase: "make each its own list item"},
		{name: "JobSetFlux replicatedJobs item with a comma", config: "apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: flux}\nspec: {replicatedJobs: [\"w,v\"]}\n", exit: 1, scope: scopeConfig, kind: "JobSetFlux", ref: "flux", field: "spec.replicatedJobs[0]", phrase: "make each its own list item"},
		// Found by FuzzConfig (testdata/fuzz/FuzzConfig/0baad825d6bb0702): a map with a
		// key that is not a string made the schema validator panic.
		{name: "JobSetFlux with a number as a key", config: "apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: flux}\nx: {0: a}\n", exit: 1, scope: scopeConfig, kind: "JobSetFlux", ref: "flux", field: "x", phrase: "fields are named by strings"},
		{name: "JobSetFlux with a null key", config: "apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: flux}\nspec: {runOptions: [{~: a}]}\n", exit: 1, scope: scopeConfig, kind: "JobSetFlux", ref: "flux", field: "spec.runOptions[0]", phrase: "fields are named by strings"},
		{name: "JobSetFlux with a list as a key", config: "apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: flux}\nspec: {[a]: 1}\n", exit: 1, scope: scopeConfig, kind: "JobSetFlux", ref: "flux", field: "spec", phrase: "has a key that is a list"},
		{name: "JobSetFlux wrong apiVersion", config: "apiVersion: fn.flux-framework.org/v1\nkind: JobSetFlux\nmetadata: {name: flux}\n", exit: 1, scope: scopeConfig, kind: "JobSetFlux", ref: "flux", field: "apiVersion", phrase: "must be fn.flux-framework.org/v1alpha1"},
		{name: "config of another kind", config: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: flux}\n", exit: 1, scope: scopeConfig, kind: "Deployment", ref: "flux", field: "kind", phrase: "must be a ConfigMap or a JobSetFlux"},
	}
}

func appendText(text string) func(string) string {
	return func(std string) string { return std + text }
}

func replaceText(old, new string) func(string) string {
	return func(std string) string {
		if !strings.Contains(std, old) {
			panic("replaceText: " + old + " is not in the input")
		}
		return strings.Replace(std, old, new, 1)
	}
}

// setPath applies one edit to a YAML node.
func setPath(t *testing.T, root *yaml.RNode, path, value string) {
	t.Helper()
	parts := strings.Split(path, ".")
	// Annotation keys hold dots: join what follows "annotations".
	for i, p := range parts {
		if p == "annotations" && i+1 < len(parts) {
			parts = append(parts[:i+1], strings.Join(parts[i+1:], "."))
			break
		}
	}
	n := root.YNode()
	for i, p := range parts {
		last := i == len(parts)-1
		switch n.Kind {
		case yaml.MappingNode:
			at := -1
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == p {
					at = j
				}
			}
			if last {
				if value == "~delete" {
					if at >= 0 {
						n.Content = append(n.Content[:at], n.Content[at+2:]...)
					}
					return
				}
				if dup, ok := strings.CutPrefix(value, "~dup "); ok {
					// The key once more, as hand-edited YAML may hold it.
					n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p}, parseNode(t, dup))
					return
				}
				v := parseNode(t, value)
				if at >= 0 {
					n.Content[at+1] = v
				} else {
					n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p}, v)
				}
				return
			}
			if at < 0 {
				m := &yaml.Node{Kind: yaml.MappingNode}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p}, m)
				n = m
				continue
			}
			n = n.Content[at+1]
		case yaml.SequenceNode:
			idx, err := strconv.Atoi(p)
			if err != nil || idx > len(n.Content) {
				t.Fatalf("bad edit path %s", path)
			}
			if last {
				v := parseNode(t, value)
				if idx == len(n.Content) {
					n.Content = append(n.Content, v)
				} else {
					n.Content[idx] = v
				}
				return
			}
			n = n.Content[idx]
		default:
			t.Fatalf("edit path %s crosses a scalar", path)
		}
	}
}

func parseNode(t *testing.T, value string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
		t.Fatalf("edit value %q: %v", value, err)
	}
	if len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	}
	return doc.Content[0]
}

// indentItem turns a YAML document into an entry of a ResourceList's items.
func indentItem(doc string) string {
	var b strings.Builder
	for i, line := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
		if i == 0 {
			b.WriteString("- " + line + "\n")
		} else {
			b.WriteString("  " + line + "\n")
		}
	}
	return b.String()
}

func functionConfig(doc string) string {
	var b strings.Builder
	b.WriteString("functionConfig:\n")
	for _, line := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
		b.WriteString("  " + line + "\n")
	}
	return b.String()
}

// input builds a case's ResourceList.
func (c hostileCase) input(t *testing.T) string {
	if c.corrupt == nil && (c.raw != "" || c.scope == scopeList || c.scope == scopeOK) {
		return c.raw
	}
	bad, err := yaml.Parse(badJobSet)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range c.ann {
		if v == "~delete" {
			setPath(t, bad, "metadata.annotations."+k, v)
			continue
		}
		setPath(t, bad, "metadata.annotations."+k, strconv.Quote(v))
	}
	for _, e := range c.edits {
		setPath(t, bad, e.path, e.value)
	}
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, doc := range append([]string{deployment, goodJobSet, bad.MustString()}, c.extra...) {
		b.WriteString(indentItem(doc))
	}
	if c.config != "" {
		b.WriteString(functionConfig(c.config))
	}
	if c.corrupt != nil {
		return c.corrupt(b.String())
	}
	return b.String()
}

// runFn runs the command with the test seed and turns a panic into a failure.
func runFn(t *testing.T, args []string, stdin string) (code int, stdout, stderr string) {
	t.Helper()
	return runFnWith(t, resourcelist.DefaultPolicy(settings.EnabledAnnotation), args, stdin)
}

// runFnWith is runFn with the memory policy mem.
func runFnWith(t *testing.T, mem resourcelist.Policy, args []string, stdin string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv(jobsetrender.SeedEnv, testSeed)
	var out, errb bytes.Buffer
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("panic: %v", r)
			}
		}()
		code = runWith(mem, args, strings.NewReader(stdin), &out, &errb)
	}()
	return code, out.String(), errb.String()
}

// identity is the input as the KRM SDK writes it back with no processing:
// what an item that the function leaves alone must look like.
func identity(t *testing.T, in string) map[string]string {
	t.Helper()
	rl, err := fn.ParseResourceList([]byte(in))
	if err != nil {
		t.Fatalf("identity: %v", err)
	}
	out, err := rl.ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	return itemsByID(t, string(out))
}

// itemsByID maps Kind/namespace/name to each item's text (a duplicated
// id gets a #N suffix).
func itemsByID(t *testing.T, out string) map[string]string {
	t.Helper()
	rl, err := fn.ParseResourceList([]byte(out))
	if err != nil {
		t.Fatalf("the output is not a ResourceList: %v\n%s", err, out)
	}
	m := map[string]string{}
	for _, it := range rl.Items {
		id := it.GetKind() + "/" + it.GetNamespace() + "/" + it.GetName()
		for n := 2; ; n++ {
			if _, dup := m[id]; !dup {
				break
			}
			id = fmt.Sprintf("%s/%s/%s#%d", it.GetKind(), it.GetNamespace(), it.GetName(), n)
		}
		m[id] = it.String()
	}
	return m
}

func TestHostileCatalogue(t *testing.T) {
	cases := catalogue(t)
	if len(cases) < 40 {
		t.Fatalf("the catalogue has %d cases, want at least 40", len(cases))
	}
	names := map[string]bool{}
	for _, c := range cases {
		if names[c.name] {
			t.Fatalf("case name %q used twice", c.name)
		}
		names[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			in := c.input(t)
			code, stdout, stderr := runFn(t, nil, in)
			if code != c.exit {
				t.Fatalf("exit code %d, want %d\nstderr:\n%s", code, c.exit, stderr)
			}
			switch c.scope {
			case scopeList:
				if stdout != "" {
					t.Errorf("stdout holds %d bytes for an input that is not a ResourceList", len(stdout))
				}
				if !strings.Contains(stderr, c.phrase) {
					t.Errorf("stderr does not say %q:\n%s", c.phrase, stderr)
				}
				return
			case scopeOK:
				if _, err := fn.ParseResourceList([]byte(stdout)); err != nil {
					t.Fatalf("output is not a ResourceList: %v", err)
				}
				if strings.Contains(stderr, "[error]") {
					t.Errorf("stderr has errors:\n%s", stderr)
				}
				return
			}
			checkErrorResult(t, c, stdout, stderr)
			checkUntouched(t, c, in, stdout)
		})
	}
}

// brokerCatalogue is the hostile cases of broker attributes: every
// attribute that bootstrap, ranks or the instance's paths depend on,
// from a JobSet and from the function config, an unknown one, and one
// that the typed config cannot set either.
func brokerCatalogue(t *testing.T) []hostileCase {
	var cases []hostileCase
	for _, name := range slices.Sorted(maps.Keys(settings.RefusedBrokerAttributes)) {
		attr := strings.Replace(name, "*", "x", 1)
		cases = append(cases,
			hostileCase{name: "broker attribute " + attr, ann: map[string]string{"flux-framework.org/broker-attributes": "broker.quorum=1 " + attr + "=node-0"},
				exit: 1, scope: scopeJobSet, field: ann("broker-attributes"), phrase: "attribute " + attr + " cannot be set"},
			hostileCase{name: "broker attribute " + attr + " in the config", config: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flux}\ndata: {broker-attributes: \"" + attr + "=1\"}\n",
				exit: 1, scope: scopeConfig, kind: "ConfigMap", ref: "flux", field: "data.broker-attributes", phrase: settings.RefusedBrokerAttributes[name][:30]})
	}
	return append(cases,
		hostileCase{name: "unknown broker attribute", ann: map[string]string{"flux-framework.org/broker-attributes": "broker.qourum=2"},
			exit: 1, scope: scopeJobSet, field: ann("broker-attributes"), phrase: "did you mean broker.quorum?"},
		hostileCase{name: "hostname in typed config", config: "apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: flux}\nspec: {brokerAttributes: [hostname=a]}\n",
			exit: 1, scope: scopeConfig, kind: "JobSetFlux", ref: "flux", field: "spec.brokerAttributes", phrase: "same rank"},
	)
}

// TestBrokerCatalogue: each refused broker attribute is an error result
// on the field that set it, and leaves the rest of the list as
// TestHostileCatalogue's cases do.
func TestBrokerCatalogue(t *testing.T) {
	for _, c := range brokerCatalogue(t) {
		t.Run(c.name, func(t *testing.T) {
			in := c.input(t)
			code, stdout, stderr := runFn(t, nil, in)
			if code != c.exit {
				t.Fatalf("exit code %d, want %d\nstderr:\n%s", code, c.exit, stderr)
			}
			checkErrorResult(t, c, stdout, stderr)
			checkUntouched(t, c, in, stdout)
		})
	}
}

// checkErrorResult finds the error result the case expects, in the
// output's results and on stderr.
func checkErrorResult(t *testing.T, c hostileCase, stdout, stderr string) {
	t.Helper()
	rl, err := fn.ParseResourceList([]byte(stdout))
	if err != nil {
		t.Fatalf("the output is not a ResourceList: %v", err)
	}
	name := c.refName()
	if name == "-" {
		name = ""
	}
	var found *fn.Result
	for _, r := range rl.Results {
		if r.Severity != fn.Error || r.ResourceRef == nil || r.ResourceRef.Kind != c.refKind() || r.ResourceRef.Name != name {
			continue
		}
		if c.field != "" && (r.Field == nil || r.Field.Path != c.field) {
			continue
		}
		if strings.Contains(r.Message, c.phrase) {
			found = r
			break
		}
	}
	if found == nil {
		t.Fatalf("no error result on %s/%s at %q saying %q; results:\n%s", c.refKind(), name, c.field, c.phrase, dumpResults(rl.Results))
	}
	line := fmt.Sprintf("[error] %s/%s/", found.ResourceRef.APIVersion, found.ResourceRef.Kind)
	if found.ResourceRef.Namespace != "" {
		line += found.ResourceRef.Namespace + "/"
	}
	line += found.ResourceRef.Name
	if c.field != "" {
		line += " " + c.field
	}
	line = resourcelist.OneLine(line + ": " + found.Message)
	if !strings.Contains(stderr, line+"\n") {
		t.Errorf("stderr lacks the line %q:\n%s", line, stderr)
	}
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, "[error] ") && !strings.HasPrefix(l, "[warning] ") {
			t.Errorf("stderr line is not a result: %q", l)
		}
	}
}

func dumpResults(rs fn.Results) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "  %s", r.Severity)
		if r.ResourceRef != nil {
			fmt.Fprintf(&b, " %s/%s", r.ResourceRef.Kind, r.ResourceRef.Name)
		}
		if r.Field != nil {
			fmt.Fprintf(&b, " %s", r.Field.Path)
		}
		fmt.Fprintf(&b, ": %s\n", r.Message)
	}
	return b.String()
}

// checkUntouched checks that the bad input changed nothing but what it
// may: the Deployment and the bad JobSet (and, for a bad config, the good
// JobSet) come out exactly as an identity run writes them.
func checkUntouched(t *testing.T, c hostileCase, in, out string) {
	t.Helper()
	want := identity(t, in)
	got := itemsByID(t, out)
	for id, w := range want {
		if strings.HasPrefix(id, "JobSet/default/good") && c.scope != scopeConfig {
			continue
		}
		if got[id] != w {
			t.Errorf("%s changed:\n--- want\n%s\n--- got\n%s", id, w, got[id])
		}
	}
	for id := range got {
		if strings.Contains(id, "/bad-flux-") {
			if _, inInput := want[id]; !inInput {
				t.Errorf("%s was generated for the refused JobSet", id)
			}
		}
	}
	good := got["JobSet/default/good"]
	if c.scope == scopeConfig {
		if len(got) != len(want) {
			t.Errorf("%d items out, %d in: a bad config must render nothing", len(got), len(want))
		}
		return
	}
	if !strings.Contains(good, "name: flux-installer") {
		t.Errorf("the valid JobSet was not rendered:\n%s", good)
	}
	for _, id := range []string{"ConfigMap/default/good-flux-entrypoint", "Secret/default/good-flux-curve"} {
		if got[id] == "" {
			t.Errorf("%s is missing from the output", id)
		}
	}
}

// A run with only the good objects renders and exits 0, and stays
// byte-identical when run again on its own output (kpt render's rule).
func TestGoodInputIsIdempotent(t *testing.T) {
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indentItem(deployment) + indentItem(goodJobSet)
	code, out, stderr := runFn(t, nil, in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, again, stderr := runFn(t, nil, out)
	if code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	if again != out {
		t.Errorf("the second run changed the output")
	}
}

// Standalone mode fails on every kind of bad input without writing any
// YAML, and names the problem on stderr.
func TestStandaloneHostile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.yaml", strings.Replace(badJobSet, "replicas: 2", "replicas: \"2\"", 1))
	good := write("good.yaml", deployment+"---\n"+goodJobSet)
	broken := write("broken.yaml", "kind: [\n")
	cfg := write("config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\ndata: {prot: \"1\"}\n")
	two := write("two.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		exit   int
		phrase string
	}{
		{"bad JobSet file", []string{good, bad}, "", 1, "[error] jobset.x-k8s.io/v1alpha2/JobSet/default/bad spec.replicatedJobs[0].replicas: must be a whole number"},
		{"malformed file", []string{broken}, "", 1, "broken.yaml"},
		{"missing file", []string{filepath.Join(dir, "nope.yaml")}, "", 2, "no such file"},
		{"bad config", []string{"--config", cfg, good}, "", 1, `did you mean "port"`},
		{"config with two objects", []string{"--config", two, good}, "", 2, "want exactly one"},
		{"unknown flag", []string{"--nope"}, "", 2, "flag provided but not defined"},
		{"malformed stdin", []string{"--config", cfg}, "a: [\n", 1, "<stdin>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runFn(t, tc.args, tc.stdin)
			if code != tc.exit {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.exit, stderr)
			}
			if out != "" {
				t.Errorf("stdout is not empty on failure:\n%s", out)
			}
			if !strings.Contains(stderr, tc.phrase) {
				t.Errorf("stderr lacks %q:\n%s", tc.phrase, stderr)
			}
		})
	}
}

// listDoc is goodJobSet inside a v1 List.
func listDoc() string {
	return "apiVersion: v1\nkind: List\nitems:\n" + indentItem(goodJobSet)
}

// TestV1ListRenderedOrRefused: a JobSet inside a v1 List is rendered in
// plain-file mode (kyaml's reader unwraps the List) as goodJobSet renders
// on its own; in KRM mode, where the List is one item, it is refused with
// exit 1 instead of passing unrendered.
func TestV1ListRenderedOrRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "list.yaml")
	if err := os.WriteFile(path, []byte(listDoc()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, plain, stderr := runFn(t, []string{path}, "")
	if code != exitOK {
		t.Fatalf("plain-file mode: exit %d: %s", code, stderr)
	}
	// KRM mode refuses it (exit 1, naming the field and the fix) rather
	// than passing it unrendered with exit 0.
	code, _, stderr = runFn(t, nil, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"+indentItem(listDoc()))
	if code != exitFailed || !strings.Contains(stderr, "items: holds the JobSet") {
		t.Fatalf("KRM mode: exit %d, want %d and the List refused: %s", code, exitFailed, stderr)
	}
	_, bare, _ := runFn(t, nil, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"+indentItem(goodJobSet))
	want := jobSetOf(t, bare, true)
	if got := jobSetOf(t, plain, false); got != want {
		t.Errorf("plain-file mode rendered the List's JobSet as\n%s\nwant\n%s", got, want)
	}
}

// jobSetOf returns the JobSet "good" of an output, as YAML.
func jobSetOf(t *testing.T, out string, list bool) string {
	t.Helper()
	var docs []*yaml.RNode
	if list {
		rl, err := yaml.Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		items, err := rl.Pipe(yaml.Lookup("items"))
		if err != nil || items == nil {
			t.Fatalf("no items: %v", err)
		}
		docs, _ = items.Elements()
	} else {
		for _, d := range strings.Split(out, "\n---\n") {
			n, err := yaml.Parse(d)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, n)
		}
	}
	for _, d := range docs {
		if d.GetKind() == "JobSet" && d.GetName() == "good" {
			return d.MustString()
		}
	}
	t.Fatalf("no JobSet good in:\n%s", out)
	return ""
}

// TestNoCommandWarns: a container with neither command nor args makes
// the instance interactive with a warning printed without -v;
// interactive: "true" says it is meant, and silences it.
func TestNoCommandWarns(t *testing.T) {
	noCommand := strings.Replace(goodJobSet, `              command: [sh, -c, "echo hello"]`+"\n", "", 1)
	path := filepath.Join(t.TempDir(), "js.yaml")
	if err := os.WriteFile(path, []byte(noCommand), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runFn(t, []string{path}, "")
	if code != exitOK || !strings.Contains(stderr, "[warning]") || !strings.Contains(stderr, "has no command or args, so the Flux instance is interactive") {
		t.Errorf("exit %d, stderr %q; want exit 0 and the warning without -v", code, stderr)
	}
	meant := strings.Replace(noCommand, `    flux-framework.org/enabled: "true"`, `    flux-framework.org/enabled: "true"`+"\n"+`    flux-framework.org/interactive: "true"`, 1)
	if err := os.WriteFile(path, []byte(meant), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runFn(t, []string{path}, ""); code != exitOK || strings.Contains(stderr, "interactive") {
		t.Errorf("interactive set: exit %d, stderr %q; want exit 0 and no word of it", code, stderr)
	}
}

// The key seed's own problems are reported, never the seed.
func TestSeedProblems(t *testing.T) {
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
	t.Run("too short", func(t *testing.T) {
		t.Setenv(jobsetrender.SeedEnv, "short-secret")
		var out, errb bytes.Buffer
		code := run(nil, strings.NewReader(in), &out, &errb)
		if code != exitProblem || !strings.Contains(errb.String(), "at least 32 bytes") || strings.Contains(errb.String(), "short-secret") {
			t.Errorf("exit %d, stderr %q", code, errb.String())
		}
	})
	t.Run("both set", func(t *testing.T) {
		t.Setenv(jobsetrender.SeedEnv, testSeed)
		t.Setenv(jobsetrender.SeedFileEnv, "/nonexistent")
		var out, errb bytes.Buffer
		if code := run(nil, strings.NewReader(in), &out, &errb); code != exitProblem || !strings.Contains(errb.String(), "set one") {
			t.Errorf("exit %d, stderr %q", code, errb.String())
		}
	})
}

// Key material (the Z85 keys of the certificate) appears only in the
// Secret's base64 data: never in plain text on stdout, nor on stderr,
// nor in the results or the ConfigMap, also with -v in standalone mode.
func TestKeyMaterialStaysInTheSecret(t *testing.T) {
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indentItem(goodJobSet) +
		// A bad JobSet alongside, so that error results are produced too.
		indentItem(strings.Replace(badJobSet, "replicas: 2", "replicas: 0", 1))
	code, out, stderr := runFn(t, nil, in)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	keys, err := curve.Derive([]byte(testSeed), "default/good")
	if err != nil {
		t.Fatal(err)
	}
	secretKey, publicKey := keys.SecretZ85(), keys.PublicZ85()
	rl, err := fn.ParseResourceList([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	var sawSecret bool
	for _, it := range rl.Items {
		text := it.String()
		if it.GetKind() == "Secret" {
			sawSecret = true
			if _, has, _ := it.NestedStringMap("stringData"); has {
				t.Errorf("the Secret uses stringData")
			}
			data, _, _ := it.NestedString("data", "curve.cert")
			cert, err := base64.StdEncoding.DecodeString(data)
			if err != nil || !strings.Contains(string(cert), secretKey) {
				t.Errorf("the Secret does not hold the derived certificate in data")
			}
		}
		for _, k := range []string{secretKey, publicKey} {
			if strings.Contains(text, k) {
				t.Errorf("%s %s holds key material in plain text", it.GetKind(), it.GetName())
			}
		}
	}
	if !sawSecret {
		t.Fatal("no Secret generated")
	}
	for _, k := range []string{secretKey, publicKey, testSeed} {
		if strings.Contains(out, k) || strings.Contains(stderr, k) {
			t.Errorf("key material or the seed appears in stdout/stderr")
		}
	}
	for _, r := range rl.Results {
		for _, k := range []string{secretKey, publicKey} {
			if strings.Contains(r.Message, k) || r.Field != nil && (fmt.Sprint(r.Field.CurrentValue) == k) {
				t.Errorf("a result holds key material")
			}
		}
	}

	// Standalone, verbose.
	dir := t.TempDir()
	f := filepath.Join(dir, "js.yaml")
	if err := os.WriteFile(f, []byte(goodJobSet), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = runFn(t, []string{"-v", f}, "")
	if code != 0 {
		t.Fatalf("standalone exit %d: %s", code, stderr)
	}
	for _, k := range []string{secretKey, publicKey, testSeed} {
		if strings.Contains(out, k) || strings.Contains(stderr, k) {
			t.Errorf("key material appears in standalone stdout/stderr")
		}
	}
}

// A broken existing Secret is reported without echoing its content.
func TestBrokenSecretNotEchoed(t *testing.T) {
	// A certificate whose public key is off by one character: the secret
	// key in it is real-looking key material and must not be printed.
	cert := mismatchedCert(t)
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indentItem(badJobSet) +
		indentItem(secretDoc(base64.StdEncoding.EncodeToString([]byte(cert))))
	code, out, stderr := runFn(t, nil, in)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	rl, err := fn.ParseResourceList([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(cert, "\n") {
		_, key, ok := strings.Cut(line, "-key = ")
		if !ok {
			continue
		}
		key = strings.Trim(key, `"`)
		if strings.Contains(stderr, key) || strings.Contains(dumpResults(rl.Results), key) {
			t.Errorf("a key of the broken Secret is echoed")
		}
	}
}

// Issue 14, point 4: a malformed certificate in an existing Secret is
// reported without quoting any of it, wherever the secret key sits in it
// and whether it is in data or stringData (at any indentation).
func TestMalformedCertificateNotEchoed(t *testing.T) {
	cert := validCert(t, "default/bad")
	_, secret, _ := strings.Cut(cert, `secret-key = "`)
	secret, _, _ = strings.Cut(secret, `"`)
	variants := map[string]string{
		"key line unindented":  strings.Replace(cert, "    secret-key", "secret-key", 1),
		"key as a section":     strings.Replace(cert, "curve\n", secret+"\ncurve\n", 1),
		"key as a key name":    strings.Replace(cert, "    secret-key = ", "    "+secret+" = ", 1),
		"forbidden character":  strings.Replace(cert, secret, secret[:20]+","+secret[21:], 1),
		"text after the value": strings.Replace(cert, secret+`"`, secret+`" `+secret, 1),
	}
	for name, text := range variants {
		for _, where := range []string{"data", "stringData", "stringData, deeper"} {
			t.Run(name+" in "+where, func(t *testing.T) {
				var doc string
				switch where {
				case "data":
					doc = secretDoc(base64.StdEncoding.EncodeToString([]byte(text)))
				case "stringData":
					doc = "apiVersion: v1\nkind: Secret\nmetadata: {name: bad-flux-curve, namespace: default}\nstringData:\n  curve.cert: |\n" + indentBy(text, "    ")
				default:
					doc = "apiVersion: v1\nkind: Secret\nmetadata: {name: bad-flux-curve, namespace: default}\nstringData:\n    curve.cert: |2\n" + indentBy(text, "          ")
				}
				in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indentItem(badJobSet) + indentItem(doc)
				code, out, stderr := runFn(t, nil, in)
				if code != 1 {
					t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
				}
				rl, err := fn.ParseResourceList([]byte(out))
				if err != nil {
					t.Fatal(err)
				}
				results := dumpResults(rl.Results)
				if !strings.Contains(results, "is not a valid Flux CURVE certificate") {
					t.Fatalf("no certificate error:\n%s", results)
				}
				for i := 0; i+5 <= len(secret); i++ {
					if w := secret[i : i+5]; strings.Contains(stderr, w) || strings.Contains(results, w) {
						t.Fatalf("key material %q is echoed:\n%s", w, stderr)
					}
				}
			})
		}
	}
}

// bigList returns a ResourceList of n ConfigMaps, each with a value of
// valueLen bytes, plus the Deployment and the valid JobSet.
func bigList(n, valueLen int) []byte {
	var b bytes.Buffer
	value := strings.Repeat("x", valueLen)
	b.Grow(n * (valueLen + 100))
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	b.WriteString(indentItem(deployment))
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-%d\n    namespace: default\n  data:\n    k: %s\n", i, value)
	}
	b.WriteString(indentItem(goodJobSet))
	return b.Bytes()
}

// checkRun runs the command on in and checks the output: exit 0, every
// input item written back (in the SDK's order) plus the two generated ones,
// the valid JobSet rendered. It returns the output's size.
func checkRun(t *testing.T, in []byte, items int) int {
	t.Helper()
	t.Setenv(jobsetrender.SeedEnv, testSeed)
	var out, errb bytes.Buffer
	if code := run(nil, bytes.NewReader(in), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %.2000s", code, errb.String())
	}
	rl, err := fn.ParseResourceList(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.Items) != items+4 {
		t.Fatalf("%d items out, want %d", len(rl.Items), items+4)
	}
	if !sort.IsSorted(rl.Items) {
		t.Error("the output is not in the SDK's order")
	}
	if js := rl.Items.Where(func(o *fn.KubeObject) bool { return o.GetKind() == "JobSet" }); len(js) != 1 || !strings.Contains(js[0].String(), "flux-installer") {
		t.Error("the JobSet was not rendered")
	}
	return out.Len()
}

// A ResourceList of about 100 MB in a few large values (the stdin limit
// is 256 MiB) passes through whole: every item back, the output the size of
// the input. Time and memory on large lists, including 200,000 ConfigMaps,
// are make bench's (docs/contributing/performance.md): its ratios against a floor hold
// them, not a timed test.
func TestLargeResourceList(t *testing.T) {
	if testing.Short() && !testenv.CI() {
		t.Skip("a 100 MB ResourceList takes seconds and a gigabyte; run without -short (CI always runs it)")
	}
	const n = 100
	in := bigList(n, 1<<20)
	if len(in) < 95<<20 {
		t.Fatalf("the input is only %d MB", len(in)>>20)
	}
	outSize := checkRun(t, in, n)
	if outSize < len(in) || outSize > len(in)+len(in)/10 {
		t.Errorf("%d bytes in, %d out", len(in), outSize)
	}
}

// runWithin runs the command like runFn but fails the test, instead of
// hanging, when it takes longer than d (a FIFO read blocks forever).
func runWithin(t *testing.T, d time.Duration, args []string, stdin string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code         int
		stdout, errs string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		c := run(args, strings.NewReader(stdin), &out, &errb)
		done <- result{c, out.String(), errb.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.stdout, r.errs
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
	}
	return 0, "", ""
}

// Issue 14, point 5 (and 9 for --config and input files): files the
// command reads are regular files of bounded size, opened without
// blocking; a seed must also not be uniform.
func TestSeedAndInputFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	empty := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
	js := write("js.yaml", []byte(goodJobSet))
	for _, tc := range []struct {
		name   string
		env    map[string]string
		args   []string
		exit   int
		phrase string
	}{
		{"seed file /dev/zero", nil, []string{"--key-seed-file", "/dev/zero"}, exitProblem, "not a regular file"},
		{"seed file /dev/urandom", nil, []string{"--key-seed-file", "/dev/urandom"}, exitProblem, "not a regular file"},
		{"seed file FIFO", nil, []string{"--key-seed-file", fifo}, exitProblem, "not a regular file (it is a FIFO)"},
		{"seed file from the environment, FIFO", map[string]string{jobsetrender.SeedFileEnv: fifo}, nil, exitProblem, "not a regular file"},
		{"seed file of 1 MiB", nil, []string{"--key-seed-file", write("big", bytes.Repeat([]byte("0123456789abcdef"), 1<<16))}, exitProblem, "at most 4096 are read"},
		{"seed file of zeros", nil, []string{"--key-seed-file", write("zeros", make([]byte, 64))}, exitProblem, "too uniform"},
		{"seed file of spaces", nil, []string{"--key-seed-file", write("spaces", bytes.Repeat([]byte(" \t"), 32))}, exitProblem, "too uniform"},
		{"seed of one repeated pair", map[string]string{jobsetrender.SeedEnv: strings.Repeat("ab", 20)}, nil, exitProblem, "too uniform"},
		{"config /dev/zero", nil, []string{"--config", "/dev/zero", js}, exitUsage, "not a regular file"},
		{"config FIFO", nil, []string{"--config", fifo, js}, exitUsage, "not a regular file"},
		{"input file FIFO", nil, []string{fifo}, exitUsage, "not a regular file"},
		{"input file /dev/zero", nil, []string{"/dev/zero"}, exitUsage, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(jobsetrender.SeedEnv, "")
			os.Unsetenv(jobsetrender.SeedEnv)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, _, stderr := runWithin(t, 10*time.Second, tc.args, empty)
			if code != tc.exit || !strings.Contains(stderr, tc.phrase) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.exit, tc.phrase)
			}
		})
	}
	t.Run("good seed file", func(t *testing.T) {
		os.Unsetenv(jobsetrender.SeedEnv)
		code, _, stderr := runWithin(t, 10*time.Second, []string{"--key-seed-file", write("seed", []byte(testSeed+"\n"))}, empty)
		if code != exitOK {
			t.Errorf("exit %d: %s", code, stderr)
		}
	})
}
