// Package fluxfiles renders the three files every Flux pod of a JobSet
// needs: the init container's script that installs the Flux view, the
// wrapped container's entrypoint that starts one broker per pod, and the
// broker's TOML configuration. They travel in one ConfigMap, keyed by
// plan.InitScript, plan.EntrypointScript and plan.BrokerConfig.
//
// The files are text/template templates embedded next to this code. Every
// value that comes from a JobSet reaches them through a quoting function
// (toml or sh), never by plain interpolation, because JobSet fields are
// user input and a stray quote or newline must not change the structure of
// a TOML document or a shell script.
package fluxfiles

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/pelletier/go-toml/v2"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
)

// Files holds the rendered contents of the three generated files.
type Files struct {
	// Init is the flux-installer init container's script (plan.InitScript).
	Init string
	// Entrypoint is the wrapped container's command[0] (plan.EntrypointScript).
	Entrypoint string
	// Broker is the broker configuration (plan.BrokerConfig).
	Broker string
}

// Map returns the files keyed by their ConfigMap keys, ready to be the
// ConfigMap's data.
func (f Files) Map() map[string]string {
	return map[string]string{
		plan.InitScript:       f.Init,
		plan.EntrypointScript: f.Entrypoint,
		plan.BrokerConfig:     f.Broker,
	}
}

var (
	//go:embed init.sh.tmpl
	initText string
	//go:embed entrypoint.sh.tmpl
	entrypointText string
	//go:embed broker.toml.tmpl
	brokerText string
)

// funcs are the only ways a template may print a value that did not come
// from the template text itself.
var funcs = template.FuncMap{
	"toml": tomlValue,
	"sh":   shWord,
}

// The templates are parsed once, on first use: Render runs for every
// JobSet a pipeline sees, and parsing costs far more than executing; but a
// run with no Flux JobSet (every run's start-up) must not pay for parsing.
var (
	initTmpl       = parse(plan.InitScript, initText)
	entrypointTmpl = parse(plan.EntrypointScript, entrypointText)
	brokerTmpl     = parse(plan.BrokerConfig, brokerText)
)

func parse(name, text string) func() *template.Template {
	return sync.OnceValue(func() *template.Template {
		// missingkey only matters for maps, but an unknown field must never
		// render as "<no value>" in a script, so be strict everywhere.
		return template.Must(template.New(name).Option("missingkey=error").Funcs(funcs).Parse(text))
	})
}

// queuePolicies are the values fluxion's qmanager accepts for queue-policy.
var queuePolicies = []string{"fcfs", "easy", "conservative", "hybrid"}

// data is what the templates see: the plan itself plus the values derived
// from it, computed here so that the templates hold no logic beyond
// conditionals and loops.
type data struct {
	*plan.Plan

	// JobSet is "namespace/name", or "name" without a namespace.
	JobSet string
	// Bind and Connect are the bootstrap URI templates.
	Bind, Connect string
	// Cores and GPUs are the per-node idsets of [[resource.config]]; GPUs
	// is empty when the nodes have no GPUs.
	Cores, GPUs string

	// The pod's paths, repeated here because templates cannot name
	// package constants.
	ViewSource, ViewDir, SoftwareDir, SoftwareStagingDir string
	RunDir, CertPath, CertSource, ConfigDir              string
}

// Render produces the three files for p. It fails when p is not complete
// enough to describe a working instance, and when the rendered broker
// configuration does not parse as TOML.
func Render(p *plan.Plan) (Files, error) {
	if err := check(p); err != nil {
		return Files{}, fmt.Errorf("fluxfiles: invalid plan: %w", err)
	}
	d := data{
		Plan:               p,
		JobSet:             p.Name,
		Bind:               "tcp://" + uriPart(p.NetworkDevice) + ":%p",
		Connect:            "tcp://%h." + uriPart(p.Subdomain) + ":%p",
		Cores:              idset(p.CoresPerNode),
		GPUs:               idset(p.GPUsPerNode),
		ViewSource:         plan.ViewSource,
		ViewDir:            plan.ViewDir,
		SoftwareDir:        plan.SoftwareDir,
		SoftwareStagingDir: plan.SoftwareStagingDir,
		RunDir:             plan.RunDir,
		CertPath:           plan.CertPath,
		CertSource:         plan.CertSourcePath,
		ConfigDir:          plan.ConfigDir,
	}
	if p.Namespace != "" {
		d.JobSet = p.Namespace + "/" + p.Name
	}

	var f Files
	var err error
	if f.Init, err = execute(initTmpl(), &d); err != nil {
		return Files{}, err
	}
	if f.Entrypoint, err = execute(entrypointTmpl(), &d); err != nil {
		return Files{}, err
	}
	if f.Broker, err = execute(brokerTmpl(), &d); err != nil {
		return Files{}, err
	}
	if err := checkBroker(f.Broker, len(p.Groups)); err != nil {
		return Files{}, err
	}
	return f, nil
}

func execute(t *template.Template, d *data) (string, error) {
	var b strings.Builder
	b.Grow(4096)
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("fluxfiles: render %s: %w", t.Name(), err)
	}
	return b.String(), nil
}

// checkBroker parses the rendered configuration back. The templates quote
// every value with a real TOML encoder, so this only fails on a bug in a
// template; the broker would reject such a file on every pod at start-up,
// which is far harder to diagnose than an error from the function.
func checkBroker(s string, groups int) error {
	var doc struct {
		Bootstrap struct {
			Hosts []map[string]any `toml:"hosts"`
		} `toml:"bootstrap"`
	}
	if err := toml.Unmarshal([]byte(s), &doc); err != nil {
		return fmt.Errorf("fluxfiles: rendered %s is not valid TOML: %w", plan.BrokerConfig, err)
	}
	if len(doc.Bootstrap.Hosts) != groups {
		return fmt.Errorf("fluxfiles: rendered %s has %d bootstrap hosts entries, want one per group (%d)",
			plan.BrokerConfig, len(doc.Bootstrap.Hosts), groups)
	}
	return nil
}

// check rejects plans that would render files which fail only at run time,
// on every pod at once.
func check(p *plan.Plan) error {
	if p == nil {
		return errors.New("nil plan")
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if p.Name == "" {
		bad("empty JobSet name")
	}
	if p.Subdomain == "" {
		bad("empty subdomain")
	}
	if len(p.Groups) == 0 {
		bad("no groups: the instance has no brokers")
	}
	pods := 0
	for i, g := range p.Groups {
		if g.Hosts == "" {
			bad("group %d (%q) has an empty hostlist", i, g.Name)
		}
		if g.Replicas < 1 || g.Completions < 1 {
			bad("group %d (%q) has %d replicas x %d completions", i, g.Name, g.Replicas, g.Completions)
		}
		pods += g.Replicas * g.Completions
	}
	if p.Brokers != pods {
		bad("brokers is %d but the groups have %d pods", p.Brokers, pods)
	}
	if p.Tasks < 1 {
		bad("tasks is %d, want at least 1", p.Tasks)
	}
	if p.CoresPerNode < 1 {
		bad("cores per node is %d, want at least 1", p.CoresPerNode)
	}
	if p.GPUsPerNode < 0 || p.GPUsPerTask < 0 || p.CoresPerTask < 0 {
		bad("negative per-node or per-task resources")
	}
	if p.Port < 1 || p.Port > 65535 {
		bad("port %d is not a TCP port", p.Port)
	}
	if p.NetworkDevice == "" {
		bad("empty network device (use \"*\" for all interfaces)")
	}
	if !slices.Contains(queuePolicies, p.QueuePolicy) {
		bad("queue policy %q is not one of fcfs, easy, conservative, hybrid", p.QueuePolicy)
	}
	if p.ConnectTimeout == "" {
		bad("empty connect timeout")
	}
	if p.Topology == "" {
		bad("empty topology")
	}
	return errors.Join(errs...)
}

// idset is the Flux idset of the first n ids: "" for none, "0" for one,
// "0-<n-1>" otherwise.
func idset(n int) string {
	switch {
	case n <= 0:
		return ""
	case n == 1:
		return "0"
	default:
		return "0-" + strconv.Itoa(n-1)
	}
}

// uriPart escapes s for a bootstrap URI template, where % introduces %h
// and %p. "*" (bind to all interfaces) passes unchanged.
func uriPart(s string) string {
	return strings.ReplaceAll(s, "%", "%%")
}

// tomlValue is the templates' "toml" function: it encodes a string or an
// int as a TOML value with go-toml's encoder, so that quotes, backslashes
// and control characters in JobSet fields are escaped by the TOML
// implementation rather than by hand.
func tomlValue(v any) (string, error) {
	switch v.(type) {
	case string, int:
	default:
		return "", fmt.Errorf("toml: cannot encode a %T", v)
	}
	// go-toml encodes documents, not bare values: encode a one-key
	// document and keep what follows the key.
	b, err := toml.Marshal(struct{ V any }{v})
	if err != nil {
		return "", fmt.Errorf("toml: encode %v: %w", v, err)
	}
	const prefix = "V = "
	s := string(bytes.TrimSuffix(b, []byte("\n")))
	if !strings.HasPrefix(s, prefix) || strings.ContainsAny(s, "\n\r") {
		return "", fmt.Errorf("toml: unexpected encoding %q of %v", s, v)
	}
	return s[len(prefix):], nil
}

// shWord is the templates' "sh" function: it turns a string into one bash
// word that expands to exactly that string, by single-quoting it: inside
// single quotes nothing is special but the quote itself, which is written
// by closing the quotes, adding an escaped quote and reopening them.
// Ints are printed in decimal, which needs no quoting.
func shWord(v any) (string, error) {
	switch v := v.(type) {
	case int:
		return strconv.Itoa(v), nil
	case string:
		// bash strings cannot hold NUL: the word would be silently cut.
		if strings.IndexByte(v, 0) >= 0 {
			return "", fmt.Errorf("sh: %q contains a NUL byte", v)
		}
		return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'", nil
	default:
		return "", fmt.Errorf("sh: cannot quote a %T", v)
	}
}
