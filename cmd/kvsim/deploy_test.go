package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/kvsim/kvsim/core/sweep"
)

// The manifests of deploy/kubernetes (docs/sweep.md, "Sharding on
// Kubernetes"), as far as the tests read them.
const (
	deployDir   = "../../deploy"
	deployImage = "kvsim:dev"
)

type k8sMeta struct {
	Name         string `yaml:"name"`
	GenerateName string `yaml:"generateName"`
}

type k8sContainer struct {
	Name      string   `yaml:"name"`
	Image     string   `yaml:"image"`
	Args      []string `yaml:"args"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
	} `yaml:"resources"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type k8sVolume struct {
	Name                  string `yaml:"name"`
	PersistentVolumeClaim *struct {
		ClaimName string `yaml:"claimName"`
	} `yaml:"persistentVolumeClaim"`
}

type k8sSecurity struct {
	RunAsNonRoot bool   `yaml:"runAsNonRoot"`
	RunAsUser    *int64 `yaml:"runAsUser"`
	FSGroup      *int64 `yaml:"fsGroup"`
}

type k8sPodSpec struct {
	RestartPolicy   string         `yaml:"restartPolicy"`
	SecurityContext k8sSecurity    `yaml:"securityContext"`
	Containers      []k8sContainer `yaml:"containers"`
	Volumes         []k8sVolume    `yaml:"volumes"`
}

type k8sJob struct {
	APIVersion string  `yaml:"apiVersion"`
	Kind       string  `yaml:"kind"`
	Metadata   k8sMeta `yaml:"metadata"`
	Spec       struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    *int   `yaml:"completions"`
		Parallelism    *int   `yaml:"parallelism"`
		Template       struct {
			Spec k8sPodSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sPVC struct {
	Kind     string  `yaml:"kind"`
	Metadata k8sMeta `yaml:"metadata"`
}

type argoStep struct {
	Name      string `yaml:"name"`
	Template  string `yaml:"template"`
	Arguments struct {
		Parameters []argoParam `yaml:"parameters"`
	} `yaml:"arguments"`
	WithSequence *struct {
		Count string `yaml:"count"`
	} `yaml:"withSequence"`
}

type argoParam struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

type argoWorkflow struct {
	APIVersion string  `yaml:"apiVersion"`
	Kind       string  `yaml:"kind"`
	Metadata   k8sMeta `yaml:"metadata"`
	Spec       struct {
		Entrypoint string `yaml:"entrypoint"`
		Arguments  struct {
			Parameters []argoParam `yaml:"parameters"`
		} `yaml:"arguments"`
		SecurityContext k8sSecurity `yaml:"securityContext"`
		Volumes         []k8sVolume `yaml:"volumes"`
		Templates       []struct {
			Name      string        `yaml:"name"`
			Steps     [][]argoStep  `yaml:"steps"`
			Container *k8sContainer `yaml:"container"`
		} `yaml:"templates"`
	} `yaml:"spec"`
}

// readManifests decodes every document of deploy/kubernetes/name into a
// new T.
func readManifests[T any](t *testing.T, name string) []T {
	t.Helper()
	f, err := os.Open(filepath.Join(deployDir, "kubernetes", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	dec := yaml.NewDecoder(f)
	for {
		var v T
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, v)
	}
}

func one[T any](t *testing.T, name string) T {
	t.Helper()
	docs := readManifests[T](t, name)
	if len(docs) != 1 {
		t.Fatalf("%s: %d documents; want 1", name, len(docs))
	}
	return docs[0]
}

// flagValue is the value of --name=VALUE in args.
func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// TestManifests: the Indexed Job, the merge Job, the volumes and the Argo
// Workflow parse, agree with each other and with docs/sweep.md: the Job is
// Indexed with completions = N of --shard auto/N (so each pod runs the
// shard of its JOB_COMPLETION_INDEX), the Workflow fans out the same
// command over --shard K/N, both merge the directory the shards write,
// runs as the image's nonroot user with fsGroup 65532, and the grid is a
// valid sweep of completions × points-per-shard points.
func TestManifests(t *testing.T) {
	pvcs := map[string]bool{}
	for _, p := range readManifests[k8sPVC](t, "pvc.yaml") {
		if p.Kind != "PersistentVolumeClaim" {
			t.Errorf("pvc.yaml: kind %q", p.Kind)
		}
		pvcs[p.Metadata.Name] = true
	}
	job := one[k8sJob](t, "sweep-job.yaml")
	if job.Kind != "Job" || job.APIVersion != "batch/v1" || job.Spec.CompletionMode != "Indexed" {
		t.Errorf("sweep-job.yaml: %s %s, completionMode %q; want an Indexed batch/v1 Job", job.APIVersion, job.Kind, job.Spec.CompletionMode)
	}
	if job.Spec.Completions == nil || job.Spec.Parallelism == nil || *job.Spec.Parallelism < 1 || *job.Spec.Parallelism > *job.Spec.Completions {
		t.Fatalf("sweep-job.yaml: completions %v, parallelism %v", job.Spec.Completions, job.Spec.Parallelism)
	}
	n := *job.Spec.Completions
	pod := job.Spec.Template.Spec
	shardC := checkPod(t, "sweep-job.yaml", pod, pvcs)
	if got := flagValue(shardC.Args, "shard"); got != "auto/"+strconv.Itoa(n) {
		t.Errorf("sweep-job.yaml: --shard=%s; want auto/%d (completions %d, K from JOB_COMPLETION_INDEX)", got, n, n)
	}
	if pod.RestartPolicy != "Never" {
		t.Errorf("sweep-job.yaml: restartPolicy %q; podFailurePolicy needs Never", pod.RestartPolicy)
	}
	results := flagValue(shardC.Args, "output-dir")
	merge := one[k8sJob](t, "merge-job.yaml")
	mergeC := checkPod(t, "merge-job.yaml", merge.Spec.Template.Spec, pvcs)
	if len(mergeC.Args) < 2 || mergeC.Args[0] != "sweep" || mergeC.Args[1] != "merge" || mergeC.Args[len(mergeC.Args)-1] != results {
		t.Errorf("merge-job.yaml: args %q; want sweep merge … %s", mergeC.Args, results)
	}

	wf := one[argoWorkflow](t, "argo-workflow.yaml")
	checkWorkflow(t, wf, n, shardC.Args, mergeC.Args, pvcs)
	checkGrid(t, shardC.Args, n)
	checkDocs(t, pvcs)
}

// checkPod checks the pod's one container and returns it.
func checkPod(t *testing.T, file string, pod k8sPodSpec, pvcs map[string]bool) k8sContainer {
	t.Helper()
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers; want 1", file, len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != deployImage {
		t.Errorf("%s: image %q; want %q (docs/sweep.md builds it)", file, c.Image, deployImage)
	}
	sc := pod.SecurityContext
	if !sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 65532 || sc.FSGroup == nil || *sc.FSGroup != 65532 {
		t.Errorf("%s: securityContext %+v; want runAsNonRoot, runAsUser and fsGroup 65532 (distroless nonroot)", file, sc)
	}
	if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" {
		t.Errorf("%s: resources.requests %v; want cpu and memory", file, c.Resources.Requests)
	}
	checkMounts(t, file, c, pod.Volumes, pvcs)
	return c
}

// checkMounts: every mount names a volume, every volume a claim of
// pvc.yaml, and every absolute path in the args lies under a mount.
func checkMounts(t *testing.T, file string, c k8sContainer, vols []k8sVolume, pvcs map[string]bool) {
	t.Helper()
	byName := map[string]k8sVolume{}
	for _, v := range vols {
		byName[v.Name] = v
		if v.PersistentVolumeClaim == nil || !pvcs[v.PersistentVolumeClaim.ClaimName] {
			t.Errorf("%s: volume %s is not a claim of pvc.yaml", file, v.Name)
		}
	}
	var mounts []string
	for _, m := range c.VolumeMounts {
		if _, ok := byName[m.Name]; !ok {
			t.Errorf("%s: mount %s names no volume", file, m.Name)
		}
		mounts = append(mounts, m.MountPath)
	}
	for _, a := range c.Args {
		if _, v, ok := strings.Cut(a, "="); ok {
			a = v
		}
		if strings.HasPrefix(a, "/") && !slices.ContainsFunc(mounts, func(m string) bool { return strings.HasPrefix(a, m+"/") }) {
			t.Errorf("%s: %s is on no mounted volume (mounts %v)", file, a, mounts)
		}
	}
}

// checkWorkflow: the Workflow runs the Job's command with --shard K/N over
// withSequence count N, then the merge Job's command.
func checkWorkflow(t *testing.T, wf argoWorkflow, n int, shardArgs, mergeArgs []string, pvcs map[string]bool) {
	t.Helper()
	if wf.Kind != "Workflow" || wf.APIVersion != "argoproj.io/v1alpha1" {
		t.Errorf("argo-workflow.yaml: %s %s", wf.APIVersion, wf.Kind)
	}
	params := map[string]string{}
	for _, p := range wf.Spec.Arguments.Parameters {
		params[p.Name] = p.Value
	}
	if params["shards"] != strconv.Itoa(n) {
		t.Errorf("argo-workflow.yaml: shards = %q; want %d, the Job's completions", params["shards"], n)
	}
	templates := map[string]*k8sContainer{}
	var steps [][]argoStep
	for _, tp := range wf.Spec.Templates {
		templates[tp.Name] = tp.Container
		if tp.Name == wf.Spec.Entrypoint {
			steps = tp.Steps
		}
	}
	if len(steps) != 2 || len(steps[0]) != 1 || len(steps[1]) != 1 {
		t.Fatalf("argo-workflow.yaml: entrypoint %s has steps %+v; want a fan-out step, then a merge step", wf.Spec.Entrypoint, steps)
	}
	fan, mergeStep := steps[0][0], steps[1][0]
	if fan.WithSequence == nil || fan.WithSequence.Count != "{{workflow.parameters.shards}}" {
		t.Errorf("argo-workflow.yaml: the fan-out step's withSequence %+v; want count {{workflow.parameters.shards}}", fan.WithSequence)
	}
	pod := k8sPodSpec{SecurityContext: wf.Spec.SecurityContext, Volumes: wf.Spec.Volumes}
	for _, sw := range []struct {
		step argoStep
		want []string
	}{{fan, shardArgs}, {mergeStep, mergeArgs}} {
		step, want := sw.step, sw.want
		c := templates[step.Template]
		if c == nil {
			t.Fatalf("argo-workflow.yaml: step %s: no container template %q", step.Name, step.Template)
		}
		pod.Containers = []k8sContainer{*c}
		checkPod(t, "argo-workflow.yaml template "+step.Template, pod, pvcs)
		got := slices.Clone(c.Args)
		want = slices.Clone(want)
		for i, a := range want {
			if strings.HasPrefix(a, "--shard=") {
				want[i] = "--shard={{inputs.parameters.k}}/{{workflow.parameters.shards}}"
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("argo-workflow.yaml: template %s runs\n%q\nwant the Job's\n%q", step.Template, got, want)
		}
	}
	if len(fan.Arguments.Parameters) != 1 || fan.Arguments.Parameters[0] != (argoParam{"k", "{{item}}"}) {
		t.Errorf("argo-workflow.yaml: the fan-out passes %+v; want k = {{item}}", fan.Arguments.Parameters)
	}
}

// checkGrid builds the Job's sweep over the repository's slice of the
// same trace (same config but for the G1 size and a G2 tier): the --set
// and --vary are valid, and the grid fills the N shards.
func checkGrid(t *testing.T, args []string, n int) {
	t.Helper()
	cfg, err := os.ReadFile("../../core/shard/testdata/conversation-250.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec := sweep.Spec{Name: "conversation.yaml", Dir: ".", Data: cfg}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--set="); ok {
			spec.Sets = append(spec.Sets, v)
		}
		if v, ok := strings.CutPrefix(a, "--vary="); ok {
			spec.Vary = append(spec.Vary, v)
		}
	}
	p, err := sweep.NewPlan(spec)
	if err != nil {
		t.Fatalf("sweep-job.yaml's grid: %v", err)
	}
	if p.Len() < n {
		t.Errorf("sweep-job.yaml: %d points for %d shards", p.Len(), n)
	}
}

// checkDocs: docs/sweep.md names the image, the claims and the files.
func checkDocs(t *testing.T, pvcs map[string]bool) {
	t.Helper()
	doc, err := os.ReadFile("../../docs/sweep.md")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{deployImage, "deploy/Dockerfile", "deploy/kubernetes/sweep-job.yaml", "deploy/kubernetes/merge-job.yaml",
		"deploy/kubernetes/argo-workflow.yaml", "deploy/kubernetes/pvc.yaml", "JOB_COMPLETION_INDEX"}
	for name := range pvcs {
		names = append(names, name)
	}
	for _, name := range names {
		if !strings.Contains(string(doc), name) {
			t.Errorf("docs/sweep.md does not mention %s", name)
		}
	}
}

// TestManifestCommands runs the Job's and the merge Job's command lines
// through kvsim, as the pods would (JOB_COMPLETION_INDEX = 0 … N-1), with
// the default sweep in place of the conversation trace's and a temporary
// directory for the results volume.
func TestManifestCommands(t *testing.T) {
	job := one[k8sJob](t, "sweep-job.yaml")
	merge := one[k8sJob](t, "merge-job.yaml")
	n := *job.Spec.Completions
	tmp := t.TempDir()
	local := func(args []string) []string {
		var out []string
		for _, a := range args {
			if strings.HasPrefix(a, "--config=") || strings.HasPrefix(a, "--set=") || strings.HasPrefix(a, "--vary=") {
				continue // the default sweep instead
			}
			out = append(out, strings.ReplaceAll(a, "/results", tmp))
		}
		return out
	}
	for k := range n {
		t.Setenv("JOB_COMPLETION_INDEX", strconv.Itoa(k))
		if _, errs, code := cli(t, local(job.Spec.Template.Spec.Containers[0].Args)...); code != exitOK {
			t.Fatalf("pod %d: exit %d: %s", k, code, errs)
		}
	}
	if _, errs, code := cli(t, local(merge.Spec.Template.Spec.Containers[0].Args)...); code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(tmp, "conversation", "sweep.json")); err != nil {
		t.Error(err)
	}
}

// TestRealRun builds the image and runs the Job's command in containers
// when a container runtime answers: each shard a `docker run` with its
// JOB_COMPLETION_INDEX, then the merge, over a bind-mounted results
// directory. Without one it says why it skipped.
func TestRealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("skipped the real run: no docker on PATH (kind and k3d need it too)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, docker, "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("skipped the real run: docker answers no daemon (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	dockerRun(t, docker, "build", "-f", filepath.Join(deployDir, "Dockerfile"), "-t", deployImage, "../..")
	job := one[k8sJob](t, "sweep-job.yaml")
	merge := one[k8sJob](t, "merge-job.yaml")
	n := *job.Spec.Completions
	results := t.TempDir()
	os.Chmod(results, 0o777) // the image's user is 65532
	var args []string
	for _, a := range job.Spec.Template.Spec.Containers[0].Args {
		if !strings.HasPrefix(a, "--config=") && !strings.HasPrefix(a, "--set=") && !strings.HasPrefix(a, "--vary=") {
			args = append(args, a) // the default sweep: the image holds no conversation trace
		}
	}
	for k := range n {
		dockerRun(t, docker, append([]string{"run", "--rm", "-e", "JOB_COMPLETION_INDEX=" + strconv.Itoa(k),
			"-v", results + ":/results", deployImage}, args...)...)
	}
	dockerRun(t, docker, append([]string{"run", "--rm", "-v", results + ":/results", deployImage},
		merge.Spec.Template.Spec.Containers[0].Args...)...)
	if _, err := os.Stat(filepath.Join(results, "conversation", "sweep.csv")); err != nil {
		t.Error(err)
	}
}

func dockerRun(t *testing.T, docker string, args ...string) {
	t.Helper()
	if out, err := exec.Command(docker, args...).CombinedOutput(); err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
