package settings

import (
	"fmt"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
)

// Broker attributes a JobSet may not set, beyond the ones the entrypoint
// sets itself (ComputedBrokerAttributes), each with the reason given in
// the error. Read from flux-core 0.88.0: flux-broker-attributes(7), the
// attribute table of src/broker/attr.c (flags READONLY and IMMUTABLE),
// and what src/broker/broker.c, bootstrap.c and state_machine.c read
// while the broker boots. Every pod gets the same words, so an attribute
// that is one broker's identity (its hostname) is wrong on all but at
// most one of them.

// Reasons shared by several rows.
const (
	readOnlyReason = "Flux sets it itself (read-only in flux-broker-attributes(7)); flux start refuses it on the command line " +
		"(\"attribute may not be set on the command line\"), so every broker would exit at start"
	pmiReason = "the broker reads it only when it bootstraps with PMI; jobset-flux boots every broker from the generated " +
		"broker.toml, whose [bootstrap] hosts bind the interface network-device names: set network-device instead"
	shellPathReason = "it points into the Flux installation, which jobset-flux places (view-image, flux-path); another path " +
		"makes every job's flux-shell fail to start"
)

// RefusedBrokerAttributes maps an attribute (or a pattern ending in *) to
// why bootstrap, rank assignment, security or the instance's paths
// depend on it. broker_attrs_test.go has a test per row.
var RefusedBrokerAttributes = map[string]string{
	// Bootstrap and rank assignment.
	"hostname": "the config bootstrap gives each broker its rank by finding its hostname in [bootstrap] hosts " +
		"(broker.c reads the attribute before gethostname); one value on every pod gives every broker the same rank, " +
		"or none when it is not in the list",
	"broker.boot-method": "jobset-flux boots every broker from the generated broker.toml (boot method config); " +
		"single boots each pod as an instance of its own, and simple or libpmi wait for a PMI server that no pod runs",
	"hostlist": "bootstrap sets it, in rank order, from [bootstrap] hosts only when it is unset (bootstrap.c); " +
		"a value of yours makes ranks and hostnames disagree for flux exec -r, job hostnames and resources",
	"broker.recovery-mode": "recovery mode refuses downstream TBON connections: no other broker can join rank 0, " +
		"and rc1 errors are ignored",
	"broker.rc1_path": "rc1 loads the modules every broker needs (kvs, resource, the scheduler) before the instance " +
		"runs anything; another command starts an instance without them. Use setup for commands before Flux starts",
	"broker.rc3_path": "rc3 unloads those modules and flushes the content store at shutdown; another command " +
		"leaves the instance unable to stop cleanly",
	"broker.exit-norestart": "it replaces the broker's exit code, which is the pod's: on rank 0 the command's exit code " +
		"would no longer decide whether the JobSet succeeded",
	"tbon.interface-hint": pmiReason,
	"tbon.prefertcp":      pmiReason,
	// The instance's paths.
	"conf.shell_initrc":     shellPathReason,
	"conf.shell_pluginpath": shellPathReason,
	// Read-only: informational, set by the broker (attr.c, ATTR_READONLY).
	"rank":                 readOnlyReason,
	"size":                 readOnlyReason,
	"version":              readOnlyReason,
	"security.owner":       readOnlyReason,
	"parent-uri":           readOnlyReason,
	"instance-level":       readOnlyReason,
	"jobid":                readOnlyReason,
	"jobid-path":           readOnlyReason,
	"parent-kvs-namespace": readOnlyReason,
	"broker.mapping":       readOnlyReason,
	"broker.pid":           readOnlyReason,
	"broker.starttime":     readOnlyReason,
	"broker.uuid":          readOnlyReason,
	"tbon.descendants":     readOnlyReason,
	"tbon.level":           readOnlyReason,
	"tbon.maxlevel":        readOnlyReason,
	"tbon.endpoint":        readOnlyReason,
	"tbon.parent-endpoint": readOnlyReason,
	"content.hash":         "flux-broker-attributes(7) marks it read-only: the content store's hash is chosen once, by Flux",
	"test-ro.*":            readOnlyReason,
}

// knownBrokerAttributes are the names flux-core 0.88.0's broker accepts
// (attr.c's table): flux start refuses any other with "unknown
// attribute", so a misspelt one stops every broker at start.
var knownBrokerAttributes = []string{
	"rank", "size", "version", "rundir", "rundir-cleanup", "statedir", "statedir-cleanup",
	"security.owner", "local-uri", "parent-uri", "instance-level", "jobid", "jobid-path",
	"parent-kvs-namespace", "hostlist", "hostname", "broker.mapping", "broker.critical-ranks",
	"broker.boot-method", "broker.pid", "broker.quorum", "broker.quorum-warn", "broker.shutdown-warn",
	"broker.shutdown-timeout", "broker.cleanup-timeout", "broker.unload-builtins-timeout",
	"broker.rc1_path", "broker.rc3_path", "broker.rc2_none", "broker.rc2_pgrp", "broker.exit-restart",
	"broker.module-nopanic", "broker.starttime", "broker.sd-notify", "broker.sd-stop-timeout",
	"broker.exit-norestart", "broker.recovery-mode", "broker.uuid", "conf.shell_initrc",
	"conf.shell_pluginpath", "config.path",
	"tbon.topo", "tbon.descendants", "tbon.level", "tbon.maxlevel", "tbon.endpoint",
	"tbon.parent-endpoint", "tbon.zmqdebug", "tbon.zmq_io_threads", "tbon.child_rcvhwm",
	"tbon.prefertcp", "tbon.interface-hint", "tbon.torpid_min", "tbon.torpid_max",
	"tbon.tcp_user_timeout", "tbon.connect_timeout", "tbon.fanout",
	"log-ring-size", "log-forward-level", "log-critical-level", "log-filename", "log-syslog-enable",
	"log-syslog-level", "log-stderr-mode", "log-stderr-level", "log-level",
	"content.backing-module", "content.hash", "content.dump", "content.restore", "cron.directory",
	"test.*", "test-ro.*", "test-nr.*", "test-im.*", "test-rd.*", "vendor.*",
}

// matchAttr reports whether name is pattern, or starts with the prefix
// of a pattern ending in * (the broker's fnmatch patterns are only those).
func matchAttr(pattern, name string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(name, prefix) && len(name) > len(prefix)
	}
	return pattern == name
}

// checkBrokerAttribute refuses an attribute flux start does not know,
// one the entrypoint sets, and one the instance depends on, saying why.
func checkBrokerAttribute(name string) error {
	if why, computed := ComputedBrokerAttributes[name]; computed {
		return fmt.Errorf("attribute %s is set by jobset-flux (%s); remove it", name, why)
	}
	for pattern, why := range RefusedBrokerAttributes {
		if matchAttr(pattern, name) {
			return fmt.Errorf("attribute %s cannot be set: %s; remove it", name, why)
		}
	}
	for _, known := range knownBrokerAttributes {
		if matchAttr(known, name) {
			return nil
		}
	}
	return fmt.Errorf("attribute %s is not one the Flux broker knows: flux start refuses it (\"unknown attribute\") and every broker would exit at start%s; see flux-broker-attributes(7)",
		finding.Quote(name), suggestAttr(name))
}

// suggestAttr proposes the closest known attribute to a misspelt one.
func suggestAttr(name string) string {
	best, dist := "", 3
	for _, known := range knownBrokerAttributes {
		if strings.HasSuffix(known, "*") {
			continue
		}
		if d := editDistance(name, known); d < dist {
			best, dist = known, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// ComputedBrokerAttributes are the attributes the entrypoint sets itself:
// given twice, the user's would either be rejected by the broker or
// silently break the instance (another rundir, another tree), so each is
// refused with the setting that does change it.
var ComputedBrokerAttributes = map[string]string{
	"rundir":               "it is the pod's private state directory",
	"statedir":             "it is the pod's private state directory",
	"local-uri":            "kubectl exec users rely on its path",
	"tbon.topo":            "set topology",
	"tbon.fanout":          "set topology (tbon.fanout is its legacy alias)",
	"tbon.connect_timeout": "set connect-timeout",
	"broker.rc2_none":      "set interactive",
	"log-stderr-level":     "set log-level",
	"config.path":          "the entrypoint passes --config-path",
}
