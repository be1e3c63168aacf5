package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
)

// Kubernetes semantics that break a Flux instance. A Flux instance is one
// start of every broker at once, each found by its hostname: Kubernetes
// fields that retry a pod, restart the JobSet, order the groups' start or
// change how a pod resolves names each break one of those. Each finding
// names the field, its value, why it breaks Flux and the fix; where the
// field can be right it is a warning. docs/user/kubernetes-semantics.md has
// the facts behind each.

// checkKubernetes checks the retry, DNS, start-up and failure policies
// of the JobSet and of the replicatedJobs in the instance.
func checkKubernetes(js *jobset.JobSet, groups []Group) finding.List {
	var found finding.List
	for _, g := range groups {
		rj := &js.ReplicatedJobs[g.Index]
		found.Add(checkRetries(rj))
		found.Add(checkDNS(js, &rj.Pod))
	}
	found.Add(checkDependsOn(js, groups))
	found.Add(checkStartupOrder(js, groups))
	found.Add(checkFailurePolicy(js))
	found.Add(checkEnding(js, groups))
	return found
}

// checkRetries refuses the Job fields that retry a failed broker's pod:
// its replacement starts a broker of the same rank, which cannot join
// the instance the failed one belonged to.
func checkRetries(rj *jobset.ReplicatedJob) finding.List {
	var found finding.List
	job := rj.JobPath()
	if b := rj.BackoffLimit; b != nil && *b > 0 {
		add(&found, finding.Error, job+".backoffLimit", strconv.Itoa(*b), "0",
			"is %d: the Job replaces a failed pod up to %d times, and the new pod's broker, with the failed one's rank, waits for an instance that is gone (rank 0's peers have exited, or a follower's instance lost it) instead of failing the Job; set backoffLimit to 0 or remove it (jobset-flux sets 0), so that a failed broker fails the Job and spec.failurePolicy decides what happens next", *b, *b)
	}
	// The Job's backoffLimit caps its per-index limits: with the 0 Flux
	// needs, the first failed pod fails the Job whatever they say (shown
	// on a real cluster, test/kube TestRetryJoinsDeadInstance), so they
	// do nothing but mislead.
	if b := rj.Retries.BackoffLimitPerIndex; b != nil {
		add(&found, finding.Warning, job+".backoffLimitPerIndex", strconv.Itoa(*b), "",
			"is %d, but it never applies: a Flux Job needs backoffLimit 0 (jobset-flux sets it when absent), which fails the Job at its first failed pod whatever the per-index limit says, and a retried index would start a broker that cannot join the instance; remove backoffLimitPerIndex and maxFailedIndexes", *b)
	}
	if m := rj.Retries.MaxFailedIndexes; m != nil {
		add(&found, finding.Warning, job+".maxFailedIndexes", strconv.Itoa(*m), "",
			"is %d, but it never applies: it goes with backoffLimitPerIndex, and a Flux Job's backoffLimit 0 fails the Job at its first failed pod; remove both", *m)
	}
	found.Add(checkPodFailurePolicy(rj))
	for _, a := range rj.Retries.PodFailureActions {
		if a.Value == jobset.PodFailurePolicyIgnore {
			add(&found, finding.Error, a.Path, a.Value, "FailJob",
				"is Ignore: a pod failure that matches the rule is not counted, and the Job starts a new pod in its place whatever backoffLimit says: its broker, with the failed one's rank, waits for an instance that is gone; use FailJob, or Count (which fails the Job, whose backoffLimit is 0)")
		}
	}
	return found
}

// checkDNS refuses a pod DNS configuration under which the peers'
// names, <hostname>.<subdomain> in broker.toml, do not resolve: they do
// only through the search path <namespace>.svc.<cluster domain> that
// ClusterFirst gives. (hostNetwork: true is refused on its own, by
// checkPod: the pod's hostname would be the node's.)
func checkDNS(js *jobset.JobSet, pod *jobset.Pod) finding.List {
	var found finding.List
	path := pod.Path + ".dnsPolicy"
	switch pod.DNS.Policy {
	case jobset.DNSDefault:
		add(&found, finding.Error, path, pod.DNS.Policy, "ClusterFirst",
			"is Default: the pod gets the node's resolv.conf, without the cluster's search path, so the peers' names <hostname>.%s (the hosts in broker.toml) never resolve and the brokers never connect; remove dnsPolicy (ClusterFirst is the default)", subdomain(js))
	case jobset.DNSNone:
		if !slices.ContainsFunc(pod.DNS.Searches, func(s string) bool { return isServiceSearch(s, js.Namespace) }) {
			add(&found, finding.Error, pod.Path+".dnsConfig.searches", strings.Join(pod.DNS.Searches, " "), serviceSearch(js.Namespace),
				"holds no <namespace>.svc.<cluster domain> entry, and %s is None: the peers' names <hostname>.%s (the hosts in broker.toml) resolve only through that search entry, so the brokers never connect; add %s (with your cluster's domain) to dnsConfig.searches, and the cluster DNS to its nameservers, or remove dnsPolicy", path, subdomain(js), serviceSearch(js.Namespace))
		}
	}
	return found
}

// serviceDomain matches a search entry <namespace>.svc.<cluster domain>.
// It is compiled on first use: start-up is paid on every render, and few
// JobSets set dnsPolicy None.
var serviceDomain = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc\.[a-z0-9.-]+\.?$`)
})

// isServiceSearch reports whether a search entry is the namespace's
// services domain (any namespace when the JobSet names none: it gets one
// when it is applied).
func isServiceSearch(entry, namespace string) bool {
	m := serviceDomain().FindStringSubmatch(entry)
	return m != nil && (namespace == "" || m[1] == namespace)
}

// serviceSearch is the search entry to add, for a message.
func serviceSearch(namespace string) string {
	if namespace == "" {
		namespace = "<namespace>"
	}
	return namespace + ".svc.cluster.local"
}

// readinessNote is why a start-up gate on readiness opens at all when
// the user's own startupProbe decides Ready.
const readinessNote = "it opens only because your own startupProbe decides when the pod is Ready"

// joinedNote is why a start-up gate on readiness never opens: the
// function's startup probe makes a pod Ready once its broker has joined
// the whole instance.
const joinedNote = "jobset-flux's startup probe makes a pod Ready only once its broker has joined the whole instance, which needs the pods the gate holds back"

// checkDependsOn refuses a dependsOn between two groups of the instance
// that waits for completion (a gate that never opens), and warns about
// one that waits for readiness (a serialised start-up).
func checkDependsOn(js *jobset.JobSet, groups []Group) finding.List {
	var found finding.List
	inInstance := func(name string) (Group, bool) {
		i := slices.IndexFunc(groups, func(g Group) bool { return g.Name == name })
		if i < 0 {
			return Group{}, false
		}
		return groups[i], true
	}
	for _, g := range groups {
		for _, d := range js.ReplicatedJobs[g.Index].DependsOn {
			dep, ok := inInstance(d.Name)
			if !ok {
				continue // a Job outside the instance (a setup step) may gate it
			}
			found.Add(checkDependency(js, g, dep, d))
		}
	}
	return found
}

// checkDependency judges one dependsOn entry of group g on group dep.
func checkDependency(js *jobset.JobSet, g, dep Group, d jobset.Dependency) finding.List {
	var found finding.List
	path := d.Path + ".status"
	switch d.Status {
	case jobset.DependencyComplete:
		add(&found, finding.Error, path, d.Status, "",
			"is Complete: replicatedJob %q starts only once replicatedJob %q has completed, but both are brokers of one Flux instance: %q's brokers wait for %q's to join, so %q never completes and %q never starts; remove dependsOn, or leave %q out of the instance (flux-framework.org/replicated-jobs)", g.Name, dep.Name, dep.Name, g.Name, dep.Name, g.Name, dep.Name)
	case jobset.DependencyReady:
		if !container(js, &dep).StartupProbe {
			add(&found, finding.Error, path, d.Status, "",
				"is Ready: replicatedJob %q's pods are created only once all of %q's are Ready, but %s, so %q never starts and the instance never forms; remove dependsOn (every replicatedJob of the instance starts at once), or leave %q out of the instance (flux-framework.org/replicated-jobs)", g.Name, dep.Name, joinedNote, g.Name, g.Name)
			break
		}
		probe := fmt.Sprintf(", and the startupProbe of %q's container must pass before Flux is up, or %q never starts", dep.Name, g.Name)
		add(&found, finding.Warning, path, d.Status, "",
			"is Ready: replicatedJob %q's pods are created only once all of %q's are Ready, so the instance starts one group after the other and %q's brokers wait for %q's meanwhile; %s%s; remove dependsOn unless the order matters", g.Name, dep.Name, dep.Name, g.Name, readinessNote, probe)
	}
	return found
}

// checkStartupOrder refuses an InOrder start-up of several groups: each
// is created once the previous one's pods are Ready, which the function's
// startup probe makes them only once the whole instance has joined. It
// warns instead when every group but the last has a startupProbe of the
// user's, which then decides Ready.
func checkStartupOrder(js *jobset.JobSet, groups []Group) finding.List {
	var found finding.List
	if js.Policies.StartupOrder != jobset.StartupInOrder || len(groups) < 2 {
		return found
	}
	path := jobset.StartupPolicyPath + ".startupPolicyOrder"
	for i := range groups[:len(groups)-1] {
		if !container(js, &groups[i]).StartupProbe {
			add(&found, finding.Error, path, js.Policies.StartupOrder, "AnyOrder",
				"is InOrder: the JobSet creates each replicatedJob only once the previous one's pods are all Ready, but %s, so the later groups never start and the instance never forms; remove startupPolicy (AnyOrder starts every group at once)", joinedNote)
			return found
		}
	}
	add(&found, finding.Warning, path, js.Policies.StartupOrder, "AnyOrder",
		"is InOrder: the JobSet creates each replicatedJob only once the previous one's pods are all Ready, so the instance starts one group after the other and the first group's brokers wait for the rest meanwhile; %s; remove startupPolicy (AnyOrder starts every group at once) unless the order matters", readinessNote)
	return found
}

// checkFailurePolicy warns about every way the JobSet's failurePolicy
// can restart it: a restart recreates the pods, which start a new Flux
// instance; the failed one's work is lost.
func checkFailurePolicy(js *jobset.JobSet) finding.List {
	var found finding.List
	pol := js.Policies
	reachable, fallsThrough := reachableRules(pol.FailureRules)
	maxRestarts := 0
	if pol.MaxRestarts != nil {
		maxRestarts = *pol.MaxRestarts
	}
	counted := fallsThrough || slices.ContainsFunc(reachable, func(r jobset.FailureRule) bool {
		return r.Action == jobset.RestartJobSet || r.Action == jobset.RestartJob
	})
	if maxRestarts > 0 && counted {
		add(&found, finding.Warning, jobset.FailurePolicyPath+".maxRestarts", strconv.Itoa(maxRestarts), "0",
			"is %d: every restart recreates the JobSet's pods, which start a new Flux instance: the jobs, queue and KVS of the failed one are lost and the command runs again from the start; keep it only if the command can start over, else set maxRestarts to 0 or make the first rule {action: FailJobSet} with no onJobFailureReasons, onJobFailureMessagePatterns or targetReplicatedJobs", maxRestarts)
	}
	for _, r := range reachable {
		switch {
		case r.Action == jobset.RestartIgnoringMaxRestarts:
			add(&found, finding.Warning, r.Path+".action", r.Action, jobset.FailJobSet,
				"is %s: it restarts the JobSet whatever maxRestarts says, and every restart starts a new Flux instance: the jobs, queue and KVS of the failed one are lost and the command runs again from the start; use FailJobSet unless the command can start over", r.Action)
		case r.Action == jobset.RestartJobIgnoringMax || r.Action == jobset.RestartJob && maxRestarts > 0:
			add(&found, finding.Warning, r.Path+".action", r.Action, jobset.FailJobSet,
				"is %s: it recreates only the failed Job, whose new pods start brokers with the ranks of the failed ones: if that Job held rank 0 the instance is gone and they wait for it, otherwise they rejoin without the work the failed brokers had; use FailJobSet (or RestartJobSet, which starts the whole instance again)", r.Action)
		}
	}
	return found
}

// reachableRules returns the failure rules that can apply, in order: a
// rule that matches every failure hides those after it. fallsThrough is
// true when no such rule exists: a failure that matches none gets the
// default action, RestartJobSet.
func reachableRules(rules []jobset.FailureRule) (reachable []jobset.FailureRule, fallsThrough bool) {
	for _, r := range rules {
		reachable = append(reachable, r)
		if r.MatchesAll() {
			return reachable, false
		}
	}
	return reachable, true
}

// checkPodFailurePolicy refuses the podFailurePolicy a Job cannot have:
// the API server refuses such a Job, so the JobSet controller never
// creates it and the JobSet never starts.
func checkPodFailurePolicy(rj *jobset.ReplicatedJob) finding.List {
	var found finding.List
	if len(rj.Retries.PodFailureActions) == 0 {
		return found
	}
	if rj.Pod.RestartPolicy == jobset.RestartPolicyOnFailure {
		add(&found, finding.Error, rj.Pod.Path+".restartPolicy", rj.Pod.RestartPolicy, jobset.RestartPolicyNever,
			"is OnFailure, but the Job has a podFailurePolicy, which Kubernetes accepts only with restartPolicy Never: the API server refuses the Job, so the JobSet never starts; remove restartPolicy (jobset-flux sets Never)")
	}
	for _, a := range rj.Retries.PodFailureActions {
		if a.Value == jobset.PodFailurePolicyFailIndex && rj.Retries.BackoffLimitPerIndex == nil {
			add(&found, finding.Error, a.Path, a.Value, "FailJob",
				"is FailIndex, which Kubernetes accepts only with backoffLimitPerIndex: the API server refuses the Job, so the JobSet never starts; use FailJob (a failed broker must fail the Job anyway)")
		}
	}
	return found
}
