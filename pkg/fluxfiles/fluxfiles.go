// Package fluxfiles generates the files every Flux pod of a JobSet needs:
// the flux-installer init container's script that copies the Flux view
// (init.sh, left out when the image brings its own Flux), the wrapped
// container's entrypoint that starts one broker per pod (entrypoint.sh),
// the broker's TOML configuration (broker.toml), and the setup setting's
// script as the user wrote it (setup.sh, when there is one). They travel
// in one ConfigMap, keyed by plan.InitScript, plan.EntrypointScript,
// plan.BrokerConfig and plan.SetupScript.
//
// The scripts are templates embedded next to this code, holding only
// {{name}} placeholders (template.go): Generate computes every value, and
// every value that comes from a JobSet reaches a script single-quoted by
// shWord, never by plain interpolation, because JobSet fields are user
// input and a stray quote or newline must not change the structure of a
// shell script. broker.toml is a Go struct (brokerConfig) marshalled by
// go-toml, which encodes every value and key.
//
// text/template is not used: its reflection (reflect.Value.MethodByName)
// makes the linker keep every exported method of every type in the
// binary, which would make it megabytes larger and every run's start-up
// slower (docs/contributing/performance.md).
package fluxfiles

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
)

// Files holds the contents of the generated files.
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

// Generate produces the files for p. It fails when p is not complete
// enough to describe a working instance.
func Generate(p *plan.Plan) (Files, error) {
	if err := check(p); err != nil {
		return Files{}, fmt.Errorf("fluxfiles: invalid plan: %w", err)
	}
	var f Files
	var err error
	// An image with its own Flux, or a mounted view, has no
	// flux-installer to run init.sh.
	if p.CopiesView() {
		if f.Init, err = initScript(); err != nil {
			return Files{}, err
		}
	}
	if f.Entrypoint, err = entrypointScript(p); err != nil {
		return Files{}, err
	}
	if f.Broker, err = brokerTOML(p); err != nil {
		return Files{}, err
	}
	f.Setup = p.Settings.Setup
	return f, nil
}

func initScript() (string, error) {
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

// entrypointScript fills entrypoint.sh: the program rank 0 runs, the
// fixed paths and options, then the parts that depend on the plan, each
// from its own template. Values are quoted in that order, so the first
// one refused is the one reported.
func entrypointScript(p *plan.Plan) (string, error) {
	sh := &quoter{}
	programText, program := programTemplate(p, sh)
	vals := sh.all(map[string]any{
		"ViewDir":              viewDir(p),
		"RunDir":               plan.RunDir,
		"CertPath":             plan.CertPath,
		"CertSource":           plan.CertSourcePath,
		"ConfigPathOption":     "-o,--config-path=" + plan.ConfigDir,
		"ConnectTimeoutOption": "-Stbon.connect_timeout=" + p.Settings.ConnectTimeout,
		"TopologyOption":       "-Stbon.topo=" + p.Settings.Topology,
		"QueuePolicy":          p.Settings.QueuePolicy,
		"StartTimeout":         p.Settings.StartTimeout,
		"Subdomain":            p.Subdomain,
		"JoinedPath":           plan.JoinedPath,
	})
	vals["brokerAttributes"] = brokerAttributes(p, sh)
	vals["terminationLog"] = terminationLog(p, sh)
	vals["quorum"], vals["elastic"], vals["rejoin"] = "", "", ""
	if p.Quorum > 0 {
		// An elastic instance starts at its smallest size; the ranks
		// beyond it join when their pods come, and leave when they go.
		vals["quorum"] = "\n    " + sh.one("quorum", fmt.Sprintf("-Sbroker.quorum=%d", p.Quorum))
		vals["elastic"] = strings.TrimSuffix(elasticText, "\n")
		vals["rejoin"] = "\n        rejoin"
	}
	vals["hangs"] = strings.TrimSuffix(hangsText, "\n")
	if err := statePart(p, vals); err != nil {
		return "", err
	}
	vals["queueStart"], vals["queueStartJoined"] = queueStart(p)
	if err := restartsPart(p, vals); err != nil {
		return "", err
	}
	owner, err := ownerPart(p)
	if err != nil {
		return "", err
	}
	vals["owner"] = owner
	vals["interactive"] = ""
	if p.Interactive {
		// No initial program: the instance stays up until flux shutdown.
		vals["interactive"] = "\n    -Sbroker.rc2_none=1"
	}
	if sh.err != nil {
		return "", fmt.Errorf("fluxfiles: render %s: %w", plan.EntrypointScript, sh.err)
	}

	if vals["findFlux"], vals["fluxCheck"], err = fluxLookup(p); err != nil {
		return "", err
	}
	if vals["setup"], err = setupPart(p, sh); err != nil {
		return "", err
	}
	if vals["program"], err = fill(plan.EntrypointScript, strings.TrimSuffix(programText, "\n"), program); err != nil {
		return "", err
	}
	return fill(plan.EntrypointScript, entrypointText, vals)
}

// statePart fills the placeholders of state-claim: rank 0's statedir on
// the claim, its stop and its report of the state it resumed. Without the
// setting the statedir stays in the pod's own volume and the rest is
// empty, as the script was before the setting.
func statePart(p *plan.Plan, vals values) error {
	vals["statedirOption"] = `-Sstatedir="${run_dir}/statedir"`
	vals["state"], vals["stateStop"], vals["stateJoined"] = "", "", ""
	if p.State == nil {
		return nil
	}
	sh := &quoter{}
	st := sh.all(map[string]any{
		"StateLeader": p.State.Leader,
		"StateMount":  plan.StateMountDir,
		"StateDir":    p.State.Dir,
	})
	if sh.err != nil {
		return fmt.Errorf("fluxfiles: render %s: %w", plan.EntrypointScript, sh.err)
	}
	var err error
	if vals["state"], err = fill(plan.EntrypointScript, stateText, st); err != nil {
		return err
	}
	// An elastic instance's followers leave at once: leave drains their
	// ranks first.
	follower := ""
	if p.Quorum == 0 {
		if follower, err = fill(plan.EntrypointScript, strings.TrimSuffix(stateFollowerText, "\n"), values{"StateLeader": st["StateLeader"]}); err != nil {
			return err
		}
	}
	if vals["stateStop"], err = fill(plan.EntrypointScript, strings.TrimSuffix(stateStopText, "\n"), values{"StateLeader": st["StateLeader"], "stateFollowerStop": follower}); err != nil {
		return err
	}
	vals["statedirOption"] = `-Sstatedir="${statedir}"` + "\n    " + `${state_attrs[@]+"${state_attrs[@]}"}`
	vals["stateJoined"] = strings.TrimSuffix(stateJoinedText, "\n")
	return nil
}

// restartsPart fills the placeholders of infra-restarts: the wrapper of
// rank 0's command that tells infrastructure failures from application
// ones, and the exit code and termination message the container ends
// with. Empty without the setting.
func restartsPart(p *plan.Plan, vals values) error {
	vals["classify"], vals["ending"] = "", ""
	if p.Settings.InfraRestarts == 0 {
		return nil
	}
	codes := make([]string, len(plan.InfraExitCodes))
	for i, c := range plan.InfraExitCodes {
		codes[i] = strconv.Itoa(c)
	}
	var err error
	if vals["classify"], err = fill(plan.EntrypointScript, strings.TrimSuffix(classifyText, "\n"), values{"InfraCodes": strings.Join(codes, " ")}); err != nil {
		return err
	}
	vals["ending"], err = fill(plan.EntrypointScript, "\n"+strings.TrimSuffix(endingText, "\n"), values{
		"ExitHung": strconv.Itoa(plan.ExitHung), "ExitNeverFormed": strconv.Itoa(plan.ExitNeverFormed), "ExitRankLost": strconv.Itoa(plan.ExitRankLost),
	})
	return err
}

// ownerPart is rank 0's patch of owner-references: the API paths of the
// objects it makes its JobSet the owner of. "" without the setting.
func ownerPart(p *plan.Plan) (string, error) {
	o := p.Owner
	if o == nil {
		return "", nil
	}
	core := "api/v1/namespaces/" + p.Namespace + "/"
	rbac := "apis/rbac.authorization.k8s.io/v1/namespaces/" + p.Namespace + "/"
	args := []string{p.Namespace, p.Name, core + "configmaps/" + p.ConfigMapName}
	if o.Secret != "" {
		args = append(args, core+"secrets/"+o.Secret)
	}
	args = append(args, rbac+"roles/"+o.RBAC, rbac+"rolebindings/"+o.RBAC)
	sh := &quoter{}
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = sh.one("owner-references argument", a)
	}
	leader := sh.one("rank 0's hostname", o.Leader)
	if sh.err != nil {
		return "", fmt.Errorf("fluxfiles: render %s: %w", plan.EntrypointScript, sh.err)
	}
	return fill(plan.EntrypointScript, strings.TrimSuffix(ownerText, "\n"), values{
		"TokenDir": plan.OwnerTokenDir, "OwnerLeader": leader, "OwnerArgs": strings.Join(words, " "),
	})
}

// brokerAttributes are the broker attributes the user asked for, one
// option a line, after the computed ones: the settings refuse any the
// entrypoint sets, so none is given twice.
func brokerAttributes(p *plan.Plan, sh *quoter) string {
	var attrs strings.Builder
	if p.Settings.LogLevel != nil {
		attrs.WriteString("\n    " + sh.one("log level", fmt.Sprintf("-Slog-stderr-level=%d", *p.Settings.LogLevel)))
	}
	for _, a := range p.Settings.BrokerAttributes {
		attrs.WriteString("\n    " + sh.one("broker attribute", "-S"+a))
	}
	return attrs.String()
}

// terminationLog sets the termination message's file of the pods whose
// wrapped container names its own terminationMessagePath: the kubelet
// reads only that one. The script is one for every group, so each such
// group is told by its pods' hostnames, <jobset>-<group>-<job>-<pod>
// (names are DNS labels, and the indexes digits: one group's pattern
// never matches another's hostname). "" when every group has the default.
func terminationLog(p *plan.Plan, sh *quoter) string {
	var b strings.Builder
	for _, g := range p.Groups {
		if g.TerminationLog == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n# A container with a terminationMessagePath of its own has it read there.")
		}
		fmt.Fprintf(&b, "\nif [[ ${HOSTNAME:-} =~ ^%s[0-9]+-[0-9]+$ ]]; then termination_log=%s; fi",
			sh.one("hostname", p.Name+"-"+g.Name+"-"), sh.one("terminationMessagePath", g.TerminationLog))
	}
	return b.String()
}

// fluxLookup returns the lines that find Flux (only when it is the first
// on the image's PATH) and those that check it runs: the view's copy, the
// mounted view image's view, or the image's own.
func fluxLookup(p *plan.Plan) (findFlux, fluxCheck string, err error) {
	switch {
	case p.MountsView():
		sh := &quoter{}
		vals := sh.all(map[string]any{"MountedView": plan.MountedViewDir})
		if sh.err != nil {
			return "", "", sh.err
		}
		fluxCheck, err = fill(plan.EntrypointScript, strings.TrimSuffix(mountedFluxText, "\n"), vals)
		return "", fluxCheck, err
	case !p.ImageFlux:
		return "", strings.TrimSuffix(viewFluxText, "\n"), nil
	}
	if p.Settings.FluxPath == "" {
		findFlux = "\n" + strings.TrimSuffix(findFluxText, "\n")
	}
	return findFlux, strings.TrimSuffix(imageFluxText, "\n"), nil
}

// setupPart sources the setup script, which is a file of its own: only
// its path, a constant, is in the entrypoint. "" without one.
func setupPart(p *plan.Plan, sh *quoter) (string, error) {
	if p.Settings.Setup == "" {
		return "", nil
	}
	setup, err := fill(plan.EntrypointScript, setupText, sh.all(map[string]any{"SetupPath": plan.ConfigDir + "/" + plan.SetupScript, "SetupStatePath": plan.SetupStatePath}))
	if err != nil {
		return "", err
	}
	return "\n" + strings.TrimSuffix(setup, "\n"), nil
}

// programTemplate returns what rank 0 runs, and its values: the
// container's command as one flux run over the job's nodes; the command
// itself (launcher); or nothing (interactive). The flux run values are
// quoted in every mode, so that a value no mode may hold is refused in
// all of them.
func programTemplate(p *plan.Plan, sh *quoter) (string, values) {
	// -N is the nodes the job runs on: all the brokers unless some groups
	// have no GPUs for a GPU job.
	program := sh.all(map[string]any{"JobNodes": p.JobNodes, "Tasks": p.Tasks})
	// The flux run options after -N and -n, each a quoted word.
	var opts strings.Builder
	if p.CoresPerTask > 1 {
		opts.WriteString(" -c " + sh.one("cores per task", p.CoresPerTask))
	}
	if p.GPUsPerTask > 0 {
		opts.WriteString(" -g " + sh.one("GPUs per task", p.GPUsPerTask))
	}
	if p.Settings.TimeLimit != "" {
		opts.WriteString(" -t " + sh.one("time limit", p.Settings.TimeLimit))
	}
	for _, o := range p.Settings.RunOptions {
		opts.WriteString(" " + sh.one("run option", o))
	}
	program["runOptions"] = opts.String()
	// With queues, the initial program starts them first (queueStart).
	var queued string
	switch {
	case p.Interactive:
		return interactiveText, values{}
	case p.Settings.Launcher:
		// The command itself is the initial program: rank 0 runs it
		// once, inside the instance, and exits with its exit code.
		if p.Settings.Queues {
			queued = ` "${queue_start[@]}"`
		}
		classified := ""
		if p.Settings.InfraRestarts > 0 {
			classified = ` "${classify[@]}"`
		}
		return launcherText, values{"queueStart": queued, "classified": classified}
	}
	if p.Settings.Queues {
		queued = "\n        \"${queue_start[@]}\""
	}
	program["queueStart"] = queued
	program["classified"] = ""
	if p.Settings.InfraRestarts > 0 {
		program["classified"] = "\n        \"${classify[@]}\""
	}
	return runText, program
}

// queueStart returns the lines that start the queues setting's queues,
// which Flux creates stopped: the command that rank 0's initial program
// runs first, or, in an interactive instance, which has none, the lines
// with which rank 0's entrypoint runs it once the instance has formed.
// Both "" without queues.
func queueStart(p *plan.Plan) (program, joined string) {
	switch {
	case !p.Settings.Queues:
		return "", ""
	case p.Interactive:
		return "", strings.TrimSuffix(queuesJoinedText, "\n")
	}
	return strings.TrimSuffix(queuesText, "\n"), ""
}

// viewDir is the prefix flux is run from: the view's copy, the image's
// flux-path, or "" for the image's PATH (found at run time).
func viewDir(p *plan.Plan) string {
	if !p.ImageFlux {
		return plan.ViewDir
	}
	return p.Settings.FluxPath
}
