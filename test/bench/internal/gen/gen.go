// Package gen writes the benchmark's input ResourceLists: a deterministic,
// monorepo-like mix of Deployments, Services, ConfigMaps and JobSets, about
// one in ten of them a JobSet annotated for Flux, and records what a correct
// render of each list must contain so that the runner can tell real work
// from a no-op.
package gen

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// Version changes whenever the generated text changes, so that cached
// inputs made by an older generator are rewritten.
const Version = 1

// Manifest describes one generated ResourceList and what jobset-flux must
// produce from it.
type Manifest struct {
	GeneratorVersion int    `json:"generatorVersion"`
	Name             string `json:"name"`
	Seed             uint64 `json:"seed"`
	Bytes            int64  `json:"bytes"`

	// Items is the number of input items.
	Items int `json:"items"`
	// Input items by kind; PlainJobSets are JobSets not rendered for Flux.
	Deployments  int `json:"deployments"`
	Services     int `json:"services"`
	ConfigMaps   int `json:"configMaps"`
	PlainJobSets int `json:"plainJobSets"`
	// FluxJobSets are the JobSets annotated flux-framework.org/enabled: "true".
	FluxJobSets int `json:"fluxJobSets"`
	// FluxGroups is the number of replicatedJobs that join a Flux instance:
	// each gets exactly one flux-installer init container.
	FluxGroups int `json:"fluxGroups"`
	// FluxPods is the number of pods (brokers) over all Flux instances.
	FluxPods int `json:"fluxPods"`
	// GPUJobSets is how many Flux JobSets ask for GPUs.
	GPUJobSets int `json:"gpuJobSets"`
}

// Want is what a correct render by jobset-flux (with a key seed, so one
// Secret per Flux JobSet) holds.
func (m *Manifest) Want() Counts {
	return Counts{
		Items:          m.Items + 2*m.FluxJobSets,
		ConfigMaps:     m.ConfigMaps + m.FluxJobSets,
		Secrets:        m.FluxJobSets,
		InitContainers: m.FluxGroups,
		BrokerConfigs:  m.FluxJobSets,
	}
}

// Floor is what the identity function's output holds: the input, unchanged.
func (m *Manifest) Floor() Counts {
	return Counts{Items: m.Items, ConfigMaps: m.ConfigMaps}
}

// Counts are the facts the runner reads back from an output ResourceList.
type Counts struct {
	Items, ConfigMaps, Secrets, InitContainers, BrokerConfigs int
}

// functionConfig is what every generated list carries: the
// typed config users write (examples/*/flux.yaml), so that config
// validation is part of what is measured.
const functionConfig = `functionConfig:
  apiVersion: fn.flux-framework.org/v1alpha1
  kind: JobSetFlux
  metadata:
    name: flux
    annotations:
      config.kubernetes.io/local-config: "true"
  spec:
    runOptions: ["-o", "cpu-affinity=per-task"]
`

const header = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"

// Empty writes a ResourceList with no items and no functionConfig: what a
// function costs just to start and answer.
func Empty(w io.Writer) (*Manifest, error) {
	_, err := io.WriteString(w, header+"items: []\n")
	return &Manifest{GeneratorVersion: Version, Name: EmptyName}, err
}

// Mix writes a ResourceList of n items drawn with the given seed.
func Mix(w io.Writer, n int, seed uint64) (*Manifest, error) {
	g := &writer{w: bufio.NewWriterSize(w, 1<<16), r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	m := &Manifest{GeneratorVersion: Version, Name: MixName(n), Seed: seed, Items: n}
	g.printf("%s%sitems:\n", header, functionConfig)
	for i := range n {
		team := fmt.Sprintf("team-%02d", g.r.IntN(40))
		switch x := g.r.IntN(100); {
		case x < 10:
			m.FluxJobSets++
			groups, pods, gpu := g.jobSet(i, team, true)
			m.FluxGroups += groups
			m.FluxPods += pods
			if gpu {
				m.GPUJobSets++
			}
		case x < 20:
			m.PlainJobSets++
			g.jobSet(i, team, false)
		case x < 55:
			m.Deployments++
			g.deployment(i, team)
		case x < 80:
			m.Services++
			g.service(i, team)
		default:
			m.ConfigMaps++
			g.configMap(i, team)
		}
	}
	return m, g.flush()
}

// Shape is a one-JobSet ResourceList: replicas Jobs of completions pods.
type Shape struct {
	Replicas, Completions int
}

func (s Shape) String() string { return fmt.Sprintf("%dx%d", s.Replicas, s.Completions) }

// OneJobSet writes a ResourceList holding a single Flux JobSet of the
// given shape, with the same functionConfig as the mixes.
func OneJobSet(w io.Writer, s Shape) (*Manifest, error) {
	g := &writer{w: bufio.NewWriterSize(w, 1<<16)}
	g.printf("%s%sitems:\n", header, functionConfig)
	g.printf(`- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata:
    name: big-%[1]s
    namespace: hpc
    annotations:
      flux-framework.org/enabled: "true"
      flux-framework.org/tasks-per-node: "4"
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: hpc/big-%[1]s.yaml
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: hpc/big-%[1]s.yaml
  spec:
    replicatedJobs:
    - name: node
      replicas: %[2]d
      template:
        spec:
          completions: %[3]d
          parallelism: %[3]d
          template:
            spec:
              containers:
              - name: app
                image: ghcr.io/converged-computing/metric-lammps:latest
                command: [lmp, -in, in.reaxc.hns, -nocite]
                resources:
                  limits:
                    cpu: "4"
                    memory: 8Gi
`, strings.ReplaceAll(s.String(), "x", "-"), s.Replicas, s.Completions)
	m := &Manifest{GeneratorVersion: Version, Name: ShapeName(s), Items: 1,
		FluxJobSets: 1, FluxGroups: 1, FluxPods: s.Replicas * s.Completions}
	return m, g.flush()
}

type writer struct {
	w   *bufio.Writer
	r   *rand.Rand
	err error
}

func (g *writer) printf(format string, args ...any) {
	if g.err == nil {
		_, g.err = fmt.Fprintf(g.w, format, args...)
	}
}

func (g *writer) flush() error {
	if g.err != nil {
		return g.err
	}
	return g.w.Flush()
}

func (g *writer) pick(options ...string) string { return options[g.r.IntN(len(options))] }

// meta writes an item's metadata as kpt hands it to a function: the
// package file it came from in config.kubernetes.io/path and index.
func (g *writer) meta(name, team, kind string, extra string) {
	file := fmt.Sprintf("%s/%s/%s.yaml", team, name, strings.ToLower(kind))
	g.printf(`  metadata:
    name: %[1]s
    namespace: %[2]s
    labels:
      app.kubernetes.io/name: %[1]s
      app.kubernetes.io/part-of: %[2]s
    annotations:
%[4]s      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: %[3]s
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: %[3]s
`, name, team, file, extra)
}

func (g *writer) deployment(i int, team string) {
	name := fmt.Sprintf("%s-%05d", g.pick("web", "api", "worker", "cache", "auth", "search"), i)
	if g.r.IntN(8) == 0 {
		g.printf("# %s serves the %s team's traffic.\n", name, team)
	}
	g.printf("- apiVersion: apps/v1\n  kind: Deployment\n")
	g.meta(name, team, "Deployment", "")
	g.printf(`  spec:
    replicas: %[1]d
    selector:
      matchLabels:
        app.kubernetes.io/name: %[2]s
    template:
      metadata:
        labels:
          app.kubernetes.io/name: %[2]s
      spec:
        containers:
        - name: app
          image: registry.example.com/%[3]s/%[2]s:1.%[4]d.%[5]d
          args: ["--port=8080", "--log-level=%[6]s"]
          ports:
          - name: http
            containerPort: 8080
          env:
          - name: DATABASE_HOST
            value: db.%[3]s.svc.cluster.local
          - name: CACHE_TTL
            value: "%[7]d"
          resources:
            requests:
              cpu: %[8]dm
              memory: %[9]dMi
            limits:
              memory: %[10]dMi
          readinessProbe:
            httpGet:
              path: /healthz
              port: http
            periodSeconds: 10
`, 1+g.r.IntN(5), name, team, g.r.IntN(30), g.r.IntN(10), g.pick("info", "debug", "warn"),
		60*(1+g.r.IntN(10)), 100*(1+g.r.IntN(8)), 128*(1+g.r.IntN(8)), 256*(1+g.r.IntN(8)))
	if g.r.IntN(3) == 0 {
		g.printf(`        - name: proxy
          image: envoyproxy/envoy:v1.31.0
          ports:
          - name: admin
            containerPort: 9901
`)
	}
}

func (g *writer) service(i int, team string) {
	name := fmt.Sprintf("%s-%05d", g.pick("web", "api", "worker", "cache", "auth", "search"), i)
	g.printf("- apiVersion: v1\n  kind: Service\n")
	g.meta(name, team, "Service", "")
	g.printf(`  spec:
    type: %s
    selector:
      app.kubernetes.io/name: %s
    ports:
    - name: http
      port: 80
      targetPort: http
      protocol: TCP
`, g.pick("ClusterIP", "ClusterIP", "ClusterIP", "NodePort"), name)
}

func (g *writer) configMap(i int, team string) {
	name := fmt.Sprintf("%s-config-%05d", g.pick("web", "api", "worker", "cache"), i)
	g.printf("- apiVersion: v1\n  kind: ConfigMap\n")
	g.meta(name, team, "ConfigMap", "")
	g.printf(`  data:
    LOG_LEVEL: %s
    FEATURE_FLAGS: "search,checkout,beta-%d"
    app.properties: |
      server.port=8080
      server.shutdown=graceful
      cache.size=%d
      upstream=http://api.%s.svc:80
`, g.pick("info", "debug"), g.r.IntN(100), 1000*(1+g.r.IntN(64)), team)
}

// jobSet writes a JobSet of 2 to 64 pods over 1 to 3 replicatedJobs and
// returns, when flux is true, the number of replicatedJobs and pods that
// join the Flux instance and whether it asks for GPUs.
func (g *writer) jobSet(i int, team string, flux bool) (groups, pods int, gpu bool) {
	name := fmt.Sprintf("%s-%05d", g.pick("sim", "train", "mpi", "sweep", "cfd"), i)
	rjs := 1 + g.r.IntN(3)
	total := max(2+g.r.IntN(63), rjs)
	parts := split(g.r, total, rjs)
	gpus := 0
	if g.r.IntN(4) == 0 {
		gpus = []int{1, 2, 4, 8}[g.r.IntN(4)]
	}
	// Some multi-job JobSets leave their last replicatedJob (a data
	// loader, say) out of the instance.
	joined := rjs
	// One command for the whole JobSet: only rank 0's runs, and a
	// different one elsewhere would be a warning.
	command := ""
	var ann strings.Builder
	if flux {
		ann.WriteString("      flux-framework.org/enabled: \"true\"\n")
		if rjs > 1 && g.r.IntN(5) == 0 {
			joined = rjs - 1
			names := make([]string, joined)
			for k := range names {
				names[k] = fmt.Sprintf("rj%d", k)
			}
			fmt.Fprintf(&ann, "      flux-framework.org/replicated-jobs: %s\n", strings.Join(names, ","))
		}
		if gpus == 0 && g.r.IntN(3) == 0 {
			fmt.Fprintf(&ann, "      flux-framework.org/tasks-per-node: \"%d\"\n", []int{2, 4, 8, 16}[g.r.IntN(4)])
		}
		if g.r.IntN(4) == 0 {
			fmt.Fprintf(&ann, "      flux-framework.org/queue-policy: %s\n", g.pick("easy", "conservative"))
		}
	} else if g.r.IntN(4) == 0 {
		ann.WriteString("      flux-framework.org/enabled: \"false\"\n")
	}
	if g.r.IntN(8) == 0 {
		g.printf("# %s: a batch workload of the %s team.\n", name, team)
	}
	g.printf("- apiVersion: jobset.x-k8s.io/v1alpha2\n  kind: JobSet\n")
	g.meta(name, team, "JobSet", ann.String())
	g.printf("  spec:\n")
	if g.r.IntN(3) == 0 {
		g.printf("    network:\n      enableDNSHostnames: true\n")
	}
	g.printf("    replicatedJobs:\n")
	for k, p := range parts {
		replicas, completions := factor(g.r, p)
		if k < joined {
			groups++
			pods += p
		}
		g.printf("    - name: rj%d\n      replicas: %d\n      template:\n        spec:\n", k, replicas)
		// The same shape, written the several ways users write it.
		switch g.r.IntN(4) {
		case 0:
			if completions > 1 {
				g.printf("          completions: %d\n", completions)
			}
		case 1:
			g.printf("          completions: %d\n          parallelism: %d\n", completions, completions)
		case 2:
			g.printf("          completionMode: Indexed\n          completions: %d\n          parallelism: %d\n          backoffLimit: 0\n", completions, completions)
		default:
			g.printf("          parallelism: %d\n", completions)
		}
		g.printf("          template:\n            spec:\n")
		if g.r.IntN(2) == 0 {
			g.printf("              restartPolicy: Never\n")
		}
		image, version := g.pick("lammps", "openfoam", "pytorch", "gromacs"), 1+g.r.IntN(9)
		if cmd := g.pick("mpirun, -n, \"8\", ./solver", "python3, /workspace/train.py, --epochs, \"3\"", "lmp, -in, in.lj", "bash, -c, 'run-case.sh && collect.sh'"); command == "" {
			command = cmd
		}
		threads, cpu, memory := 1+g.r.IntN(16), 1+g.r.IntN(16), 2*(1+g.r.IntN(16))
		g.printf(`              containers:
              - name: main
                image: ghcr.io/%s/%s:v%d
                command: [%s]
                env:
                - name: OMP_NUM_THREADS
                  value: "%d"
                resources:
                  requests:
                    cpu: "%d"
                    memory: %dGi
`, team, image, version, command, threads, cpu, memory)
		if gpus > 0 {
			g.printf("                  limits:\n                    nvidia.com/gpu: %d\n", gpus)
		}
		if g.r.IntN(3) == 0 {
			g.printf(`                volumeMounts:
                - name: scratch
                  mountPath: /scratch
              volumes:
              - name: scratch
                emptyDir: {}
`)
		}
	}
	return groups, pods, gpus > 0 && groups > 0
}

// split divides total into n positive parts.
func split(r *rand.Rand, total, n int) []int {
	parts := make([]int, n)
	left := total
	for k := range n - 1 {
		// Leave at least one for each remaining part.
		parts[k] = 1 + r.IntN(left-(n-k-1))
		left -= parts[k]
	}
	parts[n-1] = left
	return parts
}

// factor writes p pods as replicas x completions, choosing among p's
// divisors so that both Job-per-pod and pod-per-Job shapes occur.
func factor(r *rand.Rand, p int) (replicas, completions int) {
	var divisors []int
	for d := 1; d <= p; d++ {
		if p%d == 0 {
			divisors = append(divisors, d)
		}
	}
	replicas = divisors[r.IntN(len(divisors))]
	return replicas, p / replicas
}

// Names of the cached inputs.
const EmptyName = "empty"

// MixName is the name of the mix of n items.
func MixName(n int) string { return fmt.Sprintf("mix-%d", n) }

// ShapeName is the name of the one-JobSet input of shape s.
func ShapeName(s Shape) string { return "jobset-" + s.String() }

// Shapes10k are ways to lay out a 10,000-pod JobSet: one Job, Jobs of one
// pod, and two grids (a short side of 2 and a square).
var Shapes10k = []Shape{{1, 10000}, {10000, 1}, {5000, 2}, {100, 100}}
