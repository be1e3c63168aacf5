package settings

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Bounds of the per-node settings. The plan holds the counts it derives
// from a pod's resources to the same bounds, so a resource limit cannot
// reach flux run or the broker's config with a value the setting refuses.
const (
	MaxTasksPerNode = 4096
	MaxCoresPerNode = 65536
	MaxGPUsPerNode  = 256
)

// lazyRegexp compiles a pattern on first use: most renders never validate
// most settings, and compiling every pattern at start-up is a measurable
// part of a KRM function's start-up, which every render pays.
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

// An image reference as the container runtimes accept it:
// [registry[:port]/]path[:tag][@digest], lower-case path components.
var imagePattern = lazyRegexp(`^` +
	`(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]{1,5})?/)?` +
	`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*` +
	`(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?` +
	`(?:@sha256:[a-f0-9]{64})?$`)

func checkImage(raw string) error {
	if len(raw) > 512 || !imagePattern().MatchString(raw) {
		return fmt.Errorf("must be an image reference like ghcr.io/converged-computing/flux-view-ubuntu:tag-noble, got %s", finding.Quote(raw))
	}
	return nil
}

// Interface names: at most 15 characters (IFNAMSIZ), no '/', whitespace or
// '%' (which Flux would read as a URI template escape).
var devicePattern = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,14}$`)

func checkDevice(raw string) error {
	if raw == "*" || devicePattern().MatchString(raw) {
		return nil
	}
	return fmt.Errorf("must be a network interface name like eth0 (at most 15 letters, digits, '.', '_', '-') or \"*\" for all interfaces, got %s", finding.Quote(raw))
}

func checkEnum(allowed ...string) func(string) error {
	return func(raw string) error {
		for _, a := range allowed {
			if raw == a {
				return nil
			}
		}
		return fmt.Errorf("must be one of %s, got %s", strings.Join(allowed, ", "), finding.Quote(raw))
	}
}

// A Flux Standard Duration: a non-negative number with an optional unit.
var durationPattern = lazyRegexp(`^[0-9]{1,9}(?:\.[0-9]{1,6})?(?:ms|s|m|h|d)?$`)

func checkDuration(raw string) error {
	if !durationPattern().MatchString(raw) {
		return fmt.Errorf("must be a duration like 5s, 500ms, 1.5m or 1h, got %s", finding.Quote(raw))
	}
	digits := strings.TrimRight(raw, "msdh")
	if v, err := strconv.ParseFloat(digits, 64); err != nil || v <= 0 {
		return fmt.Errorf("must be longer than zero, got %s", finding.Quote(raw))
	}
	return nil
}

func checkTopology(raw string) error {
	if raw == "binomial" {
		return nil
	}
	if k, ok := strings.CutPrefix(raw, "kary:"); ok {
		n, err := strconv.Atoi(k)
		if err == nil && n >= 1 && n <= 65536 && strconv.Itoa(n) == k {
			return nil
		}
	}
	return fmt.Errorf("must be kary:K (K from 1 to 65536, the fan-out of the tree) or binomial, got %s", finding.Quote(raw))
}

// The DNS validators run their pattern even on a value already too long,
// which takes about a second for a megabyte: the length is checked first
// (with the validators' own limits and messages).

func checkLabel(raw string) error {
	if len(raw) > validation.DNS1123LabelMaxLength {
		raw = raw[:validation.DNS1123LabelMaxLength+1]
	}
	if errs := validation.IsDNS1123Label(raw); len(errs) > 0 {
		return fmt.Errorf("must be a container name (a DNS-1123 label), got %s: %s", finding.Quote(raw), errs[0])
	}
	return nil
}

// checkObjectName returns the check of an object name of the kind
// given (a DNS-1123 subdomain).
func checkObjectName(kind string) func(string) error {
	return func(raw string) error {
		if len(raw) > validation.DNS1123SubdomainMaxLength {
			raw = raw[:validation.DNS1123SubdomainMaxLength+1]
		}
		if errs := validation.IsDNS1123Subdomain(raw); len(errs) > 0 {
			return fmt.Errorf("must be a %s name (a DNS-1123 subdomain), got %s: %s", kind, finding.Quote(raw), errs[0])
		}
		return nil
	}
}

func checkQuantity(raw string) error {
	// The length first: parsing a megabyte of digits takes seconds.
	if len(raw) > 32 {
		return fmt.Errorf("must be a size like 1Gi or 512Mi, got %s", finding.Quote(raw))
	}
	q, err := resource.ParseQuantity(raw)
	if err != nil {
		return fmt.Errorf("must be a size like 1Gi or 512Mi, got %s", finding.Quote(raw))
	}
	if q.Sign() <= 0 {
		return fmt.Errorf("must be larger than zero, got %s", finding.Quote(raw))
	}
	return nil
}

func parseNameList(raw string) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	for _, part := range strings.Split(raw, ",") {
		// Spaces after commas are fine; other white space (a newline, a
		// form feed) is an error, so an accepted value holds none.
		name := strings.Trim(part, " ")
		if len(name) > validation.DNS1035LabelMaxLength {
			name = name[:validation.DNS1035LabelMaxLength+1]
		}
		if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
			return nil, fmt.Errorf("must be a comma-separated list of replicatedJob names, got %s: %s", finding.Quote(name), errs[0])
		}
		if seen[name] {
			return nil, fmt.Errorf("lists %q twice", name)
		}
		seen[name] = true
		names = append(names, name)
	}
	return names, nil
}

// Run options reach the entrypoint as separate, quoted words; the pattern is
// still strict so nothing surprising ends up on flux run's command line.
var runOptionPattern = lazyRegexp(`^[A-Za-z0-9_./:=,+@-]{1,256}$`)

// runOption is a flux run option that run-options may give.
type runOption struct {
	short      byte // 0 when it has none
	long       string
	takesValue bool // -o VALUE, -oVALUE, -o=VALUE, --setopt VALUE, --setopt=VALUE
}

// runOptions are the flux run options run-options accepts. Any other word
// is refused rather than passed on: flux run parses its options with
// Python's argparse, which also accepts bundled short flags (-vN3 for -v
// -N 3), so only exact spellings of known options can be checked.
// flux-core 0.88's flux run has neither --conf (flux batch and alloc's)
// nor --debug, and takes no abbreviation of a long option
// (cli/argparse.py: allow_abbrev=False), so both would fail it.
var runOptions = []runOption{
	{'o', "setopt", true}, {'S', "setattr", true}, {'t', "time-limit", true},
	{'q', "queue", true}, {'B', "bank", true}, {0, "urgency", true},
	{0, "job-name", true}, {0, "env", true}, {0, "env-remove", true},
	{0, "env-file", true}, {0, "rlimit", true}, {0, "input", true},
	{0, "output", true}, {0, "error", true}, {0, "cwd", true},
	{0, "flags", true}, {0, "requires", true}, {0, "taskmap", true},
	{0, "add-file", true}, {0, "signal", true},
	{0, "begin-time", true}, {0, "dependency", true},
	{'u', "unbuffered", false}, {'l', "label-io", false}, {'v', "verbose", false},
	{'x', "exclusive", false}, {0, "quiet", false},
}

// computedRunOptions are the options that set what the function computes
// (the instance's nodes and tasks, and each task's cores and GPUs): given
// again in any spelling they would override it.
var computedRunOptions = []runOption{
	{'N', "nodes", true}, {'n', "ntasks", true}, {'c', "cores-per-task", true},
	{'g', "gpus-per-task", true}, {0, "cores", true}, {0, "tasks-per-node", true},
	{0, "tasks-per-core", true}, {0, "gpus-per-node", true}, {0, "cores-per-node", true},
}

const computedMessage = "the function computes it from tasks-per-node, cores-per-node and gpus-per-node"

// parseRunOptions checks run-options as flux run would read them: every
// word is an option, or the value of the option before it; no word is a
// command (a positional word would become the program flux runs: "-v
// /bin/echo HIJACKED" ran /bin/echo instead of the user's command).
func parseRunOptions(raw string) ([]string, error) {
	// Only spaces separate words: a newline or tab is an error, not a
	// separator, so an accepted value never holds a control character.
	words := strings.FieldsFunc(raw, func(r rune) bool { return r == ' ' })
	if len(words) == 0 {
		return nil, nil
	}
	if len(words) > 64 {
		return nil, fmt.Errorf("has %d words; at most 64 are allowed", len(words))
	}
	if err := checkRunOptionWords(words); err != nil {
		return nil, err
	}
	if err := checkRunOptionSyntax(words); err != nil {
		return nil, err
	}
	if w := durationWord(words); w != "" {
		return nil, fmt.Errorf("word %s sets the job's time limit, which is the time-limit setting's (flux run reads a number without a unit as minutes, time-limit as seconds, and the later of two limits would win unseen); remove it and set time-limit (for example \"30m\") instead", finding.Quote(w))
	}
	return words, nil
}

// checkRunOptionWords checks that every word is made of the characters
// run-options allows.
func checkRunOptionWords(words []string) error {
	for _, w := range words {
		if !runOptionPattern().MatchString(w) {
			return fmt.Errorf("word %s may only contain letters, digits and _ . / : = , + @ -", finding.Quote(w))
		}
	}
	return nil
}

// checkRunOptionSyntax checks that every word is an option or the value
// of the option before it.
func checkRunOptionSyntax(words []string) error {
	for i := 0; i < len(words); i++ {
		w := words[i]
		var needValue bool
		var err error
		switch {
		case w == "--":
			return errors.New(`must not contain "--": the function adds it before your command`)
		case strings.HasPrefix(w, "--"):
			needValue, err = longRunOption(w)
		case strings.HasPrefix(w, "-") && len(w) > 1:
			needValue, err = shortRunOptions(w)
		case i == 0:
			return fmt.Errorf("must start with an option (like -o pmi=pmix), got %s", finding.Quote(w))
		default:
			return fmt.Errorf("word %s is not an option nor the value of one; flux run would take it for the command to run (give values as -o VALUE or --option=VALUE)", finding.Quote(w))
		}
		if err != nil {
			return err
		}
		if needValue {
			if i+1 == len(words) || strings.HasPrefix(words[i+1], "-") {
				return fmt.Errorf("option %s needs a value that does not start with -", finding.Quote(w))
			}
			i++
		}
	}
	return nil
}

// longRunOption checks --name or --name=value and reports whether the
// value is the next word.
func longRunOption(w string) (needValue bool, err error) {
	name, arg, hasValue := strings.Cut(w[2:], "=")
	for _, o := range computedRunOptions {
		if o.long == name {
			return false, fmt.Errorf("must not set --%s: %s", name, computedMessage)
		}
	}
	for _, o := range runOptions {
		if o.long != name {
			continue
		}
		switch {
		case !o.takesValue && hasValue:
			return false, fmt.Errorf("option --%s takes no value, got %s", name, finding.Quote(w))
		case o.takesValue && hasValue && (arg == "" || strings.HasPrefix(arg, "-")):
			return false, fmt.Errorf("option --%s needs a value that does not start with -", name)
		}
		return o.takesValue && !hasValue, nil
	}
	return false, fmt.Errorf("%s is not a flux run option run-options accepts (%s; write long options in full)", finding.Quote("--"+name), allowedRunOptions())
}

// shortRunOptions checks a word of bundled short options (-ux, -o VALUE,
// -oVALUE, -o=VALUE, -vo VALUE) and reports whether the value is the next
// word.
func shortRunOptions(w string) (needValue bool, err error) {
	for i := 1; i < len(w); i++ {
		c := w[i]
		for _, o := range computedRunOptions {
			if o.short != 0 && o.short == c {
				return false, fmt.Errorf("must not set -%c: %s", c, computedMessage)
			}
		}
		var opt *runOption
		for j := range runOptions {
			if runOptions[j].short != 0 && runOptions[j].short == c {
				opt = &runOptions[j]
			}
		}
		if opt == nil {
			return false, fmt.Errorf("-%c (in %s) is not a flux run option run-options accepts (%s)", c, finding.Quote(w), allowedRunOptions())
		}
		if opt.takesValue {
			rest := strings.TrimPrefix(w[i+1:], "=")
			if rest == "" && i > 1 {
				// flux-core 0.88's posix parsing takes the word after a
				// bundle of short options for the command: flux run fails.
				return false, fmt.Errorf("%s bundles -%c, whose value is the next word, after other options, which flux run reads as the start of the command; write the value into the word (%sVALUE) or give -%c on its own", finding.Quote(w), c, w, c)
			}
			if rest == "" {
				return true, nil
			}
			if strings.HasPrefix(rest, "-") {
				return false, fmt.Errorf("option -%c needs a value that does not start with -", c)
			}
			return false, nil
		}
	}
	return false, nil
}

func allowedRunOptions() string {
	var names []string
	for _, o := range runOptions {
		n := "--" + o.long
		if o.short != 0 {
			n = "-" + string(o.short) + "/" + n
		}
		names = append(names, n)
	}
	return strings.Join(names, " ")
}

// maxSetup bounds the setup script: it is shipped in the ConfigMap, which
// Kubernetes caps at 1 MiB with everything else in it.
const maxSetup = 64 << 10

// checkSetup accepts shell text to be shipped as a file of its own, never
// spliced into a generated script, so its content needs no quoting; it
// only has to be text a ConfigMap can hold.
func checkSetup(raw string) error {
	switch {
	case len(raw) > maxSetup:
		return fmt.Errorf("is %d bytes; at most %d are allowed (source a script from the image for more)", len(raw), maxSetup)
	case !utf8.ValidString(raw) || strings.ContainsRune(raw, 0):
		return errors.New("must be UTF-8 text without NUL bytes (a shell script)")
	case strings.TrimSpace(raw) == "":
		return errors.New("is empty; remove the setting instead")
	}
	return nil
}

// NoView is the view-image value for images that carry Flux themselves.
const NoView = "none"

// A Flux installation prefix: an absolute path of plain components, so
// that it means the same to the shell, in a log line and on disk.
var fluxPathPattern = lazyRegexp(`^(/[A-Za-z0-9._+-]+)+$`)

func checkFluxPath(raw string) error {
	if len(raw) > 256 || !fluxPathPattern().MatchString(raw) || slices.Contains(strings.Split(raw, "/"), "..") || slices.Contains(strings.Split(raw, "/"), ".") {
		return fmt.Errorf("must be the absolute prefix Flux is installed under, like /usr or /opt/flux (flux is <prefix>/bin/flux), got %s", finding.Quote(raw))
	}
	return nil
}

// durationWord returns the run-options word that sets the job's duration,
// or "" when none does. flux run sets it from -t/--time-limit (a bundle
// such as -vt too) and from any job attribute whose key is, or holds,
// attributes.system.duration: -S/--setattr duration=..., system.duration,
// .system.duration or attributes.system.duration, in every spelling of
// the option (-Skey=v, -S key=v, -S=key=v, --setattr=key=v, --setattr
// key=v, a bundle ending in S), and a key above it (system, attributes)
// whose value replaces the whole table. The words passed
// checkRunOptionSyntax, so each is an option or its value.
func durationWord(words []string) string {
	for i := 0; i < len(words); i++ {
		w := words[i]
		next := ""
		if i+1 < len(words) {
			next = words[i+1]
		}
		if long, ok := strings.CutPrefix(w, "--"); ok {
			name, arg, hasValue := strings.Cut(long, "=")
			if !hasValue {
				arg = next
			}
			if name == "time-limit" || name == "setattr" && setsDuration(arg) {
				return w
			}
			if !hasValue && longTakesValue(name) {
				i++
			}
			continue
		}
		sets, valueNext := shortBundleDuration(w, next)
		if sets {
			return w
		}
		if valueNext {
			i++
		}
	}
	return ""
}

// shortBundleDuration reads one word of bundled short options: whether
// it sets the duration (-t, or -S with a duration key), and whether its
// last option takes the next word as value.
func shortBundleDuration(w, next string) (sets, valueNext bool) {
	for i := 1; i < len(w); i++ {
		if w[i] == 't' {
			return true, false
		}
		for _, o := range runOptions {
			if o.short != w[i] || !o.takesValue {
				continue
			}
			// The rest of the word, or the next word, is the value.
			arg := strings.TrimPrefix(w[i+1:], "=")
			valueNext = i == len(w)-1
			if valueNext {
				arg = next
			}
			return o.short == 'S' && setsDuration(arg), valueNext
		}
	}
	return false, false
}

// durationKey is the jobspec key of a job's time limit.
const durationKey = "attributes.system.duration"

// setsDuration reports whether a --setattr KEY[=VALUE] sets the job's
// duration: its key, completed as flux-core's Jobspec.apply_options does
// (a leading "." stands for attributes., a key outside attributes.,
// user. and system. is under system.), is the duration's or a table
// above it (attributes.system, which the value would replace whole).
func setsDuration(keyval string) bool {
	key, _, _ := strings.Cut(keyval, "=")
	key = strings.TrimPrefix(key, "^")
	switch {
	case strings.HasPrefix(key, "."):
		key = "attributes" + key
	case strings.HasPrefix(key, "attributes."):
	case strings.HasPrefix(key, "user."), strings.HasPrefix(key, "system."):
		key = "attributes." + key
	default:
		key = "attributes.system." + key
	}
	return key == durationKey || strings.HasPrefix(durationKey, key+".")
}

func longTakesValue(name string) bool {
	for _, o := range runOptions {
		if o.long == name {
			return o.takesValue
		}
	}
	return false
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
