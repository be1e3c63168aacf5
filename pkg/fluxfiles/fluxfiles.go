// Package fluxfiles renders the three files every Flux pod of a JobSet
// needs: the init container's script that installs the Flux view, the
// wrapped container's entrypoint that starts one broker per pod, and the
// broker's TOML configuration. They travel in one ConfigMap, keyed by
// plan.InitScript, plan.EntrypointScript and plan.BrokerConfig.
//
// The scripts are templates embedded next to this code, holding only
// {{name}} placeholders: Render computes every value, and every value that
// comes from a JobSet reaches a script single-quoted by shWord, never by
// plain interpolation, because JobSet fields are user input and a stray
// quote or newline must not change the structure of a shell script.
// broker.toml is a Go struct (brokerConfig) marshalled by go-toml, which
// encodes every value and key.
//
// text/template is not used: its reflection (reflect.Value.MethodByName)
// makes the linker keep every exported method of every type in the
// binary, which would make it megabytes larger and every run's start-up
// slower (docs/performance.md).
package fluxfiles

import (
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
)

// Files holds the rendered contents of the three generated files.
type Files struct {
	// Init is the flux-installer init container's script (plan.InitScript),
	// "" when the image brings its own Flux.
	Init string
	// Entrypoint is the wrapped container's command[0] (plan.EntrypointScript).
	Entrypoint string
	// Broker is the broker configuration (plan.BrokerConfig).
	Broker string
	// Setup is the setup setting's script as the user wrote it
	// (plan.SetupScript), "" for none.
	Setup string
}

// Map returns the files keyed by their ConfigMap keys, ready to be the
// ConfigMap's data.
func (f Files) Map() map[string]string {
	m := map[string]string{
		plan.EntrypointScript: f.Entrypoint,
		plan.BrokerConfig:     f.Broker,
	}
	if f.Init != "" {
		m[plan.InitScript] = f.Init
	}
	if f.Setup != "" {
		m[plan.SetupScript] = f.Setup
	}
	return m
}

var (
	//go:embed init.sh.tmpl
	initText string
	//go:embed entrypoint.sh.tmpl
	entrypointText string
	//go:embed entrypoint-interactive.sh.tmpl
	interactiveText string
	//go:embed entrypoint-launcher.sh.tmpl
	launcherText string
	//go:embed entrypoint-setup.sh.tmpl
	setupText string
	//go:embed entrypoint-findflux.sh.tmpl
	findFluxText string
	//go:embed entrypoint-flux-view.sh.tmpl
	viewFluxText string
	//go:embed entrypoint-flux-image.sh.tmpl
	imageFluxText string
	//go:embed entrypoint-run.sh.tmpl
	runText string
)

// values maps the placeholders of one template to their text.
type values map[string]string

// quoter quotes the values of one script with shWord and keeps the first
// value it refused, so that a render lists its values and checks for an
// error once.
type quoter struct {
	err error
}

// one returns v (a string or an int) quoted; name says which value was
// refused, if it is.
func (q *quoter) one(name string, v any) string {
	s, err := shWord(v)
	if err != nil && q.err == nil {
		q.err = fmt.Errorf("%s: %w", name, err)
	}
	return s
}

// all quotes each value for the placeholder its key names, in name order.
func (q *quoter) all(raw map[string]any) values {
	vals := make(values, len(raw))
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		vals[name] = q.one(name, raw[name])
	}
	return vals
}

// fill replaces every {{name}} of the template text with vals[name]. A
// placeholder with no value, or a value with no placeholder, is an error:
// the templates and Render must stay in step. Values are not scanned for
// placeholders, so user input cannot add one.
func fill(file, text string, vals values) (string, error) {
	var b strings.Builder
	b.Grow(len(text) + 1024)
	used := make(map[string]bool, len(vals))
	for {
		i := strings.Index(text, "{{")
		if i < 0 {
			break
		}
		n := strings.Index(text[i:], "}}")
		if n < 0 {
			return "", fmt.Errorf("fluxfiles: %s: a {{ is not closed", file)
		}
		name := text[i+2 : i+n]
		v, ok := vals[name]
		if !ok {
			return "", fmt.Errorf("fluxfiles: %s: no value for {{%s}}", file, name)
		}
		used[name] = true
		b.WriteString(text[:i])
		b.WriteString(v)
		text = text[i+n+2:]
	}
	b.WriteString(text)
	for name := range vals {
		if !used[name] {
			return "", fmt.Errorf("fluxfiles: %s: no placeholder {{%s}}", file, name)
		}
	}
	return b.String(), nil
}

// Render produces the three files for p. It fails when p is not complete
// enough to describe a working instance.
func Render(p *plan.Plan) (Files, error) {
	if err := check(p); err != nil {
		return Files{}, fmt.Errorf("fluxfiles: invalid plan: %w", err)
	}
	var f Files
	var err error
	// An image with its own Flux has no flux-installer to run init.sh.
	if !p.ImageFlux {
		if f.Init, err = renderInit(); err != nil {
			return Files{}, err
		}
	}
	if f.Entrypoint, err = renderEntrypoint(p); err != nil {
		return Files{}, err
	}
	if f.Broker, err = renderBroker(p); err != nil {
		return Files{}, err
	}
	f.Setup = p.Settings.Setup
	return f, nil
}

func renderInit() (string, error) {
	sh := &quoter{}
	vals := sh.all(map[string]any{
		"ViewSource":         plan.ViewSource,
		"ViewDir":            plan.ViewDir,
		"SoftwareDir":        plan.SoftwareDir,
		"SoftwareStagingDir": plan.SoftwareStagingDir,
	})
	if sh.err != nil {
		return "", fmt.Errorf("fluxfiles: render %s: %w", plan.InitScript, sh.err)
	}
	return fill(plan.InitScript, initText, vals)
}

func renderEntrypoint(p *plan.Plan) (string, error) {
	sh := &quoter{}
	// -N is the nodes the job runs on (JobNodes), which the template
	// still calls Brokers: they are all the brokers unless some groups
	// have no GPUs for a GPU job.
	program := sh.all(map[string]any{"Brokers": p.JobNodes, "Tasks": p.Tasks})
	// The flux run options after -N and -n, each a quoted word.
	var opts strings.Builder
	if p.CoresPerTask > 1 {
		opts.WriteString(" -c " + sh.one("cores per task", p.CoresPerTask))
	}
	if p.GPUsPerTask > 0 {
		opts.WriteString(" -g " + sh.one("GPUs per task", p.GPUsPerTask))
	}
	for _, o := range p.Settings.RunOptions {
		opts.WriteString(" " + sh.one("run option", o))
	}
	program["runOptions"] = opts.String()
	programText, interactive := runText, ""
	if p.Settings.Launcher {
		// The command itself is the initial program: rank 0 runs it
		// once, inside the instance, and exits with its exit code.
		programText, program = launcherText, values{}
	}
	if p.Interactive {
		// No initial program: the instance stays up until flux shutdown.
		programText, interactive, program = interactiveText, "\n    -Sbroker.rc2_none=1", values{}
	}
	vals := sh.all(map[string]any{
		"ViewDir":              viewDir(p),
		"RunDir":               plan.RunDir,
		"CertPath":             plan.CertPath,
		"CertSource":           plan.CertSourcePath,
		"ConfigPathOption":     "-o,--config-path=" + plan.ConfigDir,
		"ConnectTimeoutOption": "-Stbon.connect_timeout=" + p.Settings.ConnectTimeout,
		"TopologyOption":       "-Stbon.topo=" + p.Settings.Topology,
		"QueuePolicy":          p.Settings.QueuePolicy,
	})
	if sh.err != nil {
		return "", fmt.Errorf("fluxfiles: render %s: %w", plan.EntrypointScript, sh.err)
	}
	// Extra attributes after the computed ones: the settings refuse any
	// the entrypoint sets, so none is given twice.
	var attrs strings.Builder
	if p.Settings.LogLevel != nil {
		attrs.WriteString("\n    " + sh.one("log level", fmt.Sprintf("-Slog-stderr-level=%d", *p.Settings.LogLevel)))
	}
	for _, a := range p.Settings.BrokerAttributes {
		attrs.WriteString("\n    " + sh.one("broker attribute", "-S"+a))
	}
	if sh.err != nil {
		return "", fmt.Errorf("fluxfiles: render %s: %w", plan.EntrypointScript, sh.err)
	}
	vals["interactive"] = attrs.String() + interactive
	vals["findFlux"], vals["fluxCheck"] = "", strings.TrimSuffix(viewFluxText, "\n")
	if p.ImageFlux {
		vals["fluxCheck"] = strings.TrimSuffix(imageFluxText, "\n")
		if p.Settings.FluxPath == "" {
			vals["findFlux"] = "\n" + strings.TrimSuffix(findFluxText, "\n")
		}
	}
	// The setup script is a file of its own: only its path, a constant,
	// is in this script.
	vals["setup"] = ""
	if p.Settings.Setup != "" {
		setup, err := fill(plan.EntrypointScript, setupText, sh.all(map[string]any{"SetupPath": plan.ConfigDir + "/" + plan.SetupScript}))
		if err != nil {
			return "", err
		}
		vals["setup"] = "\n" + strings.TrimSuffix(setup, "\n")
	}
	var err error
	if vals["program"], err = fill(plan.EntrypointScript, strings.TrimSuffix(programText, "\n"), program); err != nil {
		return "", err
	}
	return fill(plan.EntrypointScript, entrypointText, vals)
}

// viewDir is the prefix flux is run from: the view's copy, the image's
// flux-path, or "" for the image's PATH (found at run time).
func viewDir(p *plan.Plan) string {
	if !p.ImageFlux {
		return plan.ViewDir
	}
	return p.Settings.FluxPath
}

// check rejects plans that would render files which fail only at run time,
// on every pod at once: plans whose shape (groups, ranks, counts) does not
// add up. The settings' values are not checked again: a value that
// reaches a file is quoted or encoded there, whatever it holds.
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
	if p.Tasks < 1 && !p.Settings.Launcher {
		bad("tasks is %d, want at least 1", p.Tasks)
	}
	jobNodes := 0
	if p.Settings.Launcher && p.Interactive {
		bad("launcher and interactive are exclusive")
	}
	for i, g := range p.Groups {
		if g.Cores < 1 {
			bad("group %d (%q) has %d cores per node, want at least 1", i, g.Name, g.Cores)
		}
		if g.GPUs < 0 {
			bad("group %d (%q) has %d GPUs per node", i, g.Name, g.GPUs)
		}
		if g.RunsJob {
			jobNodes += g.Replicas * g.Completions
			// What flux run asks of each node must be there, or the job
			// never starts.
			if g.Cores < p.TasksPerNode*max(1, p.CoresPerTask) || g.GPUs < p.TasksPerNode*p.GPUsPerTask {
				bad("group %d (%q) has %d cores and %d GPUs per node, less than %d tasks of %d cores and %d GPUs",
					i, g.Name, g.Cores, g.GPUs, p.TasksPerNode, p.CoresPerTask, p.GPUsPerTask)
			}
		}
	}
	// A launcher plans no flux run, so there is no job to fit.
	if !p.Settings.Launcher && (p.JobNodes < 1 || p.JobNodes != jobNodes) {
		bad("the job runs on %d nodes but its groups have %d pods", p.JobNodes, jobNodes)
	}
	if !p.Settings.Launcher && p.Tasks != p.JobNodes*p.TasksPerNode {
		bad("tasks is %d, want %d nodes x %d tasks per node", p.Tasks, p.JobNodes, p.TasksPerNode)
	}
	if p.GPUsPerTask < 0 || p.CoresPerTask < 0 {
		bad("negative per-task resources")
	}
	// Each setting was checked once, by package settings; what the files
	// need besides is that the plan's settings came from there at all.
	if !p.Settings.Resolved() {
		bad("the settings were not resolved (settings.Defaults, then Apply)")
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

// shWord turns a string into one bash
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
