package deploy

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// closingMargin is what serve needs after --drain, at most: the closing
// line (serve.Config.ClosingTimeout) and the transports' and HTTP
// server's close.
const closingMargin = 30 * time.Second

// bundle is everything deploy/ says, decoded.
type bundle struct {
	sts      *appsv1.StatefulSet
	services map[string]*corev1.Service
	sa       *corev1.ServiceAccount
	role     *rbacv1.Role
	binding  *rbacv1.RoleBinding
	pdb      *policyv1.PodDisruptionBudget
	config   *corev1.ConfigMap
	policy   *networkingv1.NetworkPolicy

	docker    *dockerfile
	ignore    []string          // the repository root's .dockerignore
	setup     map[string]string // scripts/setup.sh's assignments (ORT_NPM=...)
	goVersion string            // go.mod's go directive
	// providerVerbs are the verbs on pods protoactor's Kubernetes
	// provider calls, read from its source (nil: the source not found).
	providerVerbs []string
}

// root is the module's root, deploy's parent.
func root(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

func load(t testing.TB) *bundle {
	t.Helper()
	b := &bundle{services: map[string]*corev1.Service{}}
	files, err := filepath.Glob("k8s/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/k8s (%v)", err)
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.addManifests(f, text); err != nil {
			t.Fatal(err)
		}
	}
	for what, missing := range map[string]bool{
		"StatefulSet": b.sts == nil, "ServiceAccount": b.sa == nil, "Role": b.role == nil,
		"RoleBinding": b.binding == nil, "PodDisruptionBudget": b.pdb == nil, "ConfigMap": b.config == nil,
		"Service": len(b.services) == 0, "NetworkPolicy": b.policy == nil,
	} {
		if missing {
			t.Errorf("deploy/k8s has no %s", what)
		}
	}
	text, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if b.docker, err = parseDockerfile(string(text)); err != nil {
		t.Fatal(err)
	}
	ignore, err := os.ReadFile(filepath.Join(root(t), ".dockerignore"))
	if err != nil {
		t.Fatalf("the build context's .dockerignore: %v", err)
	}
	for _, l := range strings.Split(string(ignore), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			b.ignore = append(b.ignore, l)
		}
	}
	setup, err := os.ReadFile(filepath.Join(root(t), "scripts", "setup.sh"))
	if err != nil {
		t.Fatal(err)
	}
	b.setup = shellAssignments(string(setup))
	mod, err := os.ReadFile(filepath.Join(root(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod); m != nil {
		b.goVersion = string(m[1])
	}
	b.providerVerbs = protoactorVerbs(t)
	return b
}

var docSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

// addManifests decodes every document of one file strictly into its
// Kubernetes API type: an unknown or misspelt field, a duplicate key, an
// unknown kind fail.
func (b *bundle) addManifests(file string, text []byte) error {
	for i, doc := range docSep.Split(string(text), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return fmt.Errorf("%s, document %d: %v", file, i+1, err)
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "apps/v1 StatefulSet":
			b.sts = &appsv1.StatefulSet{}
			obj = b.sts
		case "v1 Service":
			obj = &corev1.Service{}
		case "v1 ServiceAccount":
			b.sa = &corev1.ServiceAccount{}
			obj = b.sa
		case "rbac.authorization.k8s.io/v1 Role":
			b.role = &rbacv1.Role{}
			obj = b.role
		case "rbac.authorization.k8s.io/v1 RoleBinding":
			b.binding = &rbacv1.RoleBinding{}
			obj = b.binding
		case "policy/v1 PodDisruptionBudget":
			b.pdb = &policyv1.PodDisruptionBudget{}
			obj = b.pdb
		case "networking.k8s.io/v1 NetworkPolicy":
			b.policy = &networkingv1.NetworkPolicy{}
			obj = b.policy
		case "v1 ConfigMap":
			b.config = &corev1.ConfigMap{}
			obj = b.config
		default:
			return fmt.Errorf("%s, document %d: kind %q of %q: not one deploy_test.go knows (add it to addManifests)", file, i+1, tm.Kind, tm.APIVersion)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			return fmt.Errorf("%s, document %d (%s): %v", file, i+1, tm.Kind, err)
		}
		if s, ok := obj.(*corev1.Service); ok {
			b.services[s.Name] = s
		}
	}
	return nil
}

func stripComments(doc string) string {
	var out []string
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestManifestsDecodeStrictly: the manifests decode into the Kubernetes
// API types with no unknown field, and a typo fails.
// Mutation caught: a misspelt field (terminationGracePeriodSecond) or
// one at the wrong level decodes silently with a lax decoder; here it
// fails (the typo cases below, and seen failing on statefulset.yaml).
func TestManifestsDecodeStrictly(t *testing.T) {
	load(t)
	text, err := os.ReadFile("k8s/statefulset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, from, to string }{
		{"misspelt field", "terminationGracePeriodSeconds:", "terminationGracePeriodSecond:"},
		{"field at the wrong level", "      serviceAccountName: brisvox", "      serviceAccountName: brisvox\n      path: /readyz"},
		{"duplicate key", "  replicas: 3", "  replicas: 3\n  replicas: 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := strings.Replace(string(text), c.from, c.to, 1)
			if bad == string(text) {
				t.Fatalf("the case's text %q is not in statefulset.yaml", c.from)
			}
			b := &bundle{services: map[string]*corev1.Service{}}
			if err := b.addManifests("statefulset.yaml", []byte(bad)); err == nil {
				t.Error("decoded without an error")
			}
		})
	}
}

// TestInvariants: the manifests and the Dockerfile keep the rules each
// check names, and each check fails on the mutation it is there for
// (mutations applied to a fresh decode).
func TestInvariants(t *testing.T) {
	for _, p := range check(load(t)) {
		t.Error(p)
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			b := load(t)
			m.mutate(b)
			probs := check(b)
			for _, p := range probs {
				if strings.Contains(p, m.want) {
					return
				}
			}
			t.Errorf("mutation not caught: want a problem with %q, got %q", m.want, probs)
		})
	}
}

// check lists what the deployment gets wrong.
func check(b *bundle) []string {
	var probs []string
	for _, c := range []func(*bundle) []string{
		checkProbes, checkDrain, checkToken, checkRBAC, checkSelectors, checkResources,
		checkServices, checkAgentMount, checkDockerStages, checkDockerPins, checkDockerRuntime, checkExpose, checkDockerIgnore, checkNetworkPolicy,
	} {
		probs = append(probs, c(b)...)
	}
	return probs
}

// mutations are the bugs the checks are there for, each applied to a
// decode of the real files.
var mutations = []struct {
	name   string
	mutate func(*bundle)
	want   string
}{
	{"readiness on /healthz", func(b *bundle) { b.container().ReadinessProbe.HTTPGet.Path = "/healthz" }, "readiness"},
	{"liveness on /readyz", func(b *bundle) { b.container().LivenessProbe.HTTPGet.Path = "/readyz" }, "liveness"},
	{"probe on another port", func(b *bundle) { b.container().ReadinessProbe.HTTPGet.Port.StrVal = "cluster" }, "port"},
	{"grace period shorter than the drains", func(b *bundle) { g := int64(400); b.sts.Spec.Template.Spec.TerminationGracePeriodSeconds = &g }, "terminationGracePeriodSeconds"},
	{"preStop bound other than --drain", func(b *bundle) {
		c := b.container().Lifecycle.PreStop.Exec
		c.Command[2] = strings.Replace(c.Command[2], "DRAIN=300", "DRAIN=200", 1)
	}, "DRAIN"},
	{"preStop without the drain request", func(b *bundle) {
		c := b.container().Lifecycle.PreStop.Exec
		c.Command[2] = strings.Replace(c.Command[2], "/drain", "/undrain", 1)
	}, "preStop"},
	{"token as a literal value", func(b *bundle) {
		for i, e := range b.container().Env {
			if e.Name == "BRISVOX_OPERATOR_TOKEN" {
				b.container().Env[i].ValueFrom, b.container().Env[i].Value = nil, "0123456789abcdef0123"
			}
		}
	}, "Secret"},
	{"token variable not the flag's", func(b *bundle) { b.setArg("--operator-token-env", "OTHER_TOKEN") }, "OTHER_TOKEN"},
	{"pcm token not from a Secret", func(b *bundle) {
		env := b.container().Env
		b.container().Env = slices.DeleteFunc(env, func(e corev1.EnvVar) bool { return e.Name == "BRISVOX_PCM_TOKEN" })
	}, "BRISVOX_PCM_TOKEN"},
	{"node name not the pod's", func(b *bundle) { b.setArg("--node", "brisvox") }, "--node"},
	{"RBAC without watch", func(b *bundle) { b.role.Rules[0].Verbs = []string{"get", "patch"} }, "watch"},
	{"RBAC with more than the provider needs", func(b *bundle) { b.role.Rules[0].Verbs = append(b.role.Rules[0].Verbs, "delete") }, "delete"},
	{"binding to another account", func(b *bundle) { b.binding.Subjects[0].Name = "default" }, "RoleBinding"},
	{"pods on the default account", func(b *bundle) { b.sts.Spec.Template.Spec.ServiceAccountName = "" }, "serviceAccountName"},
	{"PDB selecting no pod", func(b *bundle) { b.pdb.Spec.Selector.MatchLabels = map[string]string{"app": "brisvox"} }, "PodDisruptionBudget"},
	{"PDB with no budget", func(b *bundle) { b.pdb.Spec.MaxUnavailable, b.pdb.Spec.MinAvailable = nil, nil }, "PodDisruptionBudget"},
	{"no cpu request", func(b *bundle) { delete(b.container().Resources.Requests, corev1.ResourceCPU) }, "cpu"},
	{"no memory request", func(b *bundle) { delete(b.container().Resources.Requests, corev1.ResourceMemory) }, "memory"},
	{"headless Service with a cluster IP", func(b *bundle) { b.services[b.sts.Spec.ServiceName].Spec.ClusterIP = "" }, "headless"},
	{"Service selecting no pod", func(b *bundle) { b.services["brisvox"].Spec.Selector = map[string]string{"app": "x"} }, "Service brisvox"},
	{"Service to a port the pod lacks", func(b *bundle) { b.services["brisvox"].Spec.Ports[0].TargetPort.StrVal = "web" }, "web"},
	{"agent file not mounted", func(b *bundle) { b.setArg("--agent", "/etc/brisvox/other.toml") }, "--agent"},
	{"build stage on another Go", func(b *bundle) { b.docker.stages[0].from = "golang:1.25-bookworm" }, "go.mod"},
	{"runtime not Debian 12 slim", func(b *bundle) { b.docker.stages[1].from = "debian:13-slim" }, "debian:12-slim"},
	{"setup.sh not run", func(b *bundle) { b.docker.stages[0].drop("RUN", "scripts/setup.sh serve") }, "setup.sh serve"},
	{"a pin copied into the Dockerfile", func(b *bundle) { b.docker.text += "\n# " + b.setup["ORT_SHA256"] }, "ORT_SHA256"},
	{"model copied from elsewhere", func(b *bundle) {
		b.docker.stages[1].replace("COPY", "/src/.native/models/silero_vad_v5.onnx", "/src/silero.onnx")
	}, "SILERO_DEST"},
	{"root user", func(b *bundle) { b.docker.stages[1].replace("USER", "10001:10001", "root") }, "USER"},
	{"no health check", func(b *bundle) { b.docker.stages[1].drop("HEALTHCHECK", "") }, "HEALTHCHECK"},
	{"health check on /readyz", func(b *bundle) { b.docker.stages[1].replace("HEALTHCHECK", "/healthz", "/readyz") }, "HEALTHCHECK"},
	{"no STOPSIGNAL", func(b *bundle) { b.docker.stages[1].drop("STOPSIGNAL", "") }, "STOPSIGNAL"},
	{"entrypoint without --drain", func(b *bundle) {
		b.docker.stages[1].replace("ENTRYPOINT", `, "--drain=300s"`, "")
	}, "--drain"},
	{"RTP range not exposed", func(b *bundle) { b.docker.stages[1].replace("EXPOSE", "20000-20039/udp", "20000-20019/udp") }, "EXPOSE"},
	{"cluster port open to every pod", func(b *bundle) { b.policy.Spec.Ingress[0].From = nil }, "cluster port"},
	{"cluster port in the open rule", func(b *bundle) {
		r := &b.policy.Spec.Ingress[1]
		r.Ports = append(r.Ports, b.policy.Spec.Ingress[0].Ports...)
	}, "cluster port"},
	{"RTP closed by the policy", func(b *bundle) {
		r := &b.policy.Spec.Ingress[1]
		r.Ports = r.Ports[:len(r.Ports)-1]
	}, "RTP"},
	{"policy on other pods", func(b *bundle) { b.policy.Spec.PodSelector.MatchLabels = map[string]string{"app": "x"} }, "NetworkPolicy"},
	{".native in the build context", func(b *bundle) {
		b.ignore = slices.DeleteFunc(b.ignore, func(l string) bool { return l == ".native" })
	}, ".native"},
	{"cluster port not exposed", func(b *bundle) { b.docker.stages[1].replace("EXPOSE", " 7070/tcp", "") }, "EXPOSE"},
}

func (b *bundle) container() *corev1.Container {
	cs := b.sts.Spec.Template.Spec.Containers
	for i := range cs {
		if cs[i].Name == "brisvox" {
			return &cs[i]
		}
	}
	return &corev1.Container{}
}

// args are the container's --name=value arguments.
func (b *bundle) args() map[string]string {
	return flagArgs(b.container().Args)
}

func (b *bundle) setArg(name, value string) {
	c := b.container()
	for i, a := range c.Args {
		if strings.HasPrefix(a, name+"=") {
			c.Args[i] = name + "=" + value
		}
	}
}

// flagArgs maps --name=value (or a bare --name) to its value.
func flagArgs(args []string) map[string]string {
	out := map[string]string{}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		out["--"+name] = value
	}
	return out
}

// port resolves a container port by name or number.
func (b *bundle) port(name string) (int32, corev1.Protocol, bool) {
	for _, p := range b.container().Ports {
		if p.Name == name || strconv.Itoa(int(p.ContainerPort)) == name {
			return p.ContainerPort, p.Protocol, true
		}
	}
	return 0, "", false
}

// addrPort is the port of a HOST:PORT flag value.
func addrPort(v string) int {
	i := strings.LastIndex(v, ":")
	if i < 0 {
		return 0
	}
	n, _ := strconv.Atoi(v[i+1:])
	return n
}

// checkProbes: readiness on /readyz (503 while draining: no new call is
// routed to the pod), liveness and startup on /healthz (200 while
// draining: a draining pod is not restarted), all on the port --addr
// serves. Mutations caught: readiness on /healthz, liveness on /readyz
// (a draining pod killed), a probe on another port.
func checkProbes(b *bundle) []string {
	var probs []string
	c := b.container()
	want := addrPort(b.args()["--addr"])
	for _, p := range []struct {
		what  string
		probe *corev1.Probe
		path  string
	}{{"readiness", c.ReadinessProbe, "/readyz"}, {"liveness", c.LivenessProbe, "/healthz"}, {"startup", c.StartupProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			probs = append(probs, fmt.Sprintf("the %s probe is not an HTTP GET of %s", p.what, p.path))
			continue
		}
		if p.probe.HTTPGet.Path != p.path {
			probs = append(probs, fmt.Sprintf("the %s probe asks %s, want %s", p.what, p.probe.HTTPGet.Path, p.path))
		}
		port, _, ok := b.port(p.probe.HTTPGet.Port.String())
		if !ok || int(port) != want {
			probs = append(probs, fmt.Sprintf("the %s probe's port %s is not --addr's %d", p.what, p.probe.HTTPGet.Port.String(), want))
		}
	}
	return probs
}

var drainBound = regexp.MustCompile(`(?m)^\s*DRAIN=(\d+)\s*$`)

// imageDrain is the --drain of the image's entrypoint (0: none).
func (b *bundle) imageDrain() time.Duration {
	ep, _ := b.docker.final().exec("ENTRYPOINT")
	d, _ := time.ParseDuration(flagArgs(ep)["--drain"])
	return d
}

// checkDrain: the preStop drains the node through the operator API (the
// pod's own node name) and waits at most the image's --drain; the grace
// period covers that wait, serve's own --drain after SIGTERM and the
// closing line. Mutations caught: a grace period of 400 s (the kubelet's
// SIGKILL cuts the calls serve would still drain), a preStop bound of
// 200 s against --drain 300 s, a preStop that does not drain, --node not
// the pod's name (the drain would answer 404).
func checkDrain(b *bundle) []string {
	var probs []string
	c := b.container()
	drain := b.imageDrain()
	if d, ok := b.args()["--drain"]; ok {
		if dd, err := time.ParseDuration(d); err != nil || dd != drain {
			probs = append(probs, fmt.Sprintf("the manifest's --drain %s is not the image's %v: give one", d, drain))
		}
	}
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil || len(c.Lifecycle.PreStop.Exec.Command) != 3 {
		return append(probs, "no preStop exec of /bin/sh -c SCRIPT")
	}
	script := c.Lifecycle.PreStop.Exec.Command[2]
	if !strings.Contains(script, `-X POST "$api/operator/nodes/$POD_NAME/drain"`) || !strings.Contains(script, "api=http://127.0.0.1:"+strconv.Itoa(addrPort(b.args()["--addr"]))) {
		probs = append(probs, "the preStop does not POST /operator/nodes/$POD_NAME/drain to --addr's port")
	}
	if strings.Contains(script, "$BRISVOX_OPERATOR_TOKEN\"") && !strings.Contains(script, "curl -fsS -K -") {
		probs = append(probs, "the preStop passes the token on a command line")
	}
	if b.args()["--node"] != "$(POD_NAME)" || !b.envFromField("POD_NAME", "metadata.name") {
		probs = append(probs, "--node is not $(POD_NAME), the pod's metadata.name: the preStop's drain names another node")
	}
	m := drainBound.FindStringSubmatch(script)
	if m == nil {
		return append(probs, "the preStop has no DRAIN=SECONDS bound")
	}
	bound, _ := strconv.Atoi(m[1])
	if time.Duration(bound)*time.Second != drain || drain == 0 {
		probs = append(probs, fmt.Sprintf("the preStop's DRAIN=%d is not the image's --drain %v", bound, drain))
	}
	grace := b.sts.Spec.Template.Spec.TerminationGracePeriodSeconds
	need := time.Duration(bound)*time.Second + drain + closingMargin
	if grace == nil || time.Duration(*grace)*time.Second < need {
		probs = append(probs, fmt.Sprintf("terminationGracePeriodSeconds is under the preStop's %d s + --drain %v + %v", bound, drain, closingMargin))
	}
	return probs
}

func (b *bundle) envFromField(name, path string) bool {
	for _, e := range b.container().Env {
		if e.Name == name {
			return e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == path
		}
	}
	return false
}

// fromSecret tells whether the variable name comes from a Secret's key.
func (b *bundle) fromSecret(name string) bool {
	for _, e := range b.container().Env {
		if e.Name == name {
			r := e.ValueFrom
			return e.Value == "" && r != nil && r.SecretKeyRef != nil && r.SecretKeyRef.Name != "" && r.SecretKeyRef.Key != ""
		}
	}
	return false
}

// checkToken: the variable --operator-token-env names, and each
// transport's token variable of the agent file, come from a Secret.
// Mutations caught: the operator token as a literal value, the flag
// naming a variable the pod does not set, the PCM token left out.
func checkToken(b *bundle) []string {
	var probs []string
	name := b.args()["--operator-token-env"]
	if name == "" {
		probs = append(probs, "no --operator-token-env: no operator API, no preStop drain")
	} else if !b.fromSecret(name) {
		probs = append(probs, fmt.Sprintf("%s (--operator-token-env) is not from a Secret's key", name))
	}
	a, err := b.agent()
	if err != nil {
		return append(probs, err.Error())
	}
	for _, v := range []string{a.Transports.PCM.TokenEnv, a.Transports.WebRTC.TokenEnv} {
		if v != "" && !b.fromSecret(v) {
			probs = append(probs, fmt.Sprintf("%s (the agent file's token_env) is not from a Secret's key", v))
		}
	}
	return probs
}

// checkRBAC: the pods run as the ServiceAccount the RoleBinding binds to
// the Role, which grants on pods exactly the verbs protoactor's
// Kubernetes provider calls (read from its source). Mutations caught: a
// verb missing (watch: the node never sees the others), one more than it
// needs (delete), the binding to another account, the pods on the
// default account.
func checkRBAC(b *bundle) []string {
	var probs []string
	spec := b.sts.Spec.Template.Spec
	if spec.ServiceAccountName == "" || spec.ServiceAccountName != b.sa.Name {
		probs = append(probs, fmt.Sprintf("the pods' serviceAccountName %q is not the ServiceAccount %s", spec.ServiceAccountName, b.sa.Name))
	}
	if r := b.binding.RoleRef; r.Kind != "Role" || r.Name != b.role.Name || r.APIGroup != rbacv1.GroupName {
		probs = append(probs, fmt.Sprintf("the RoleBinding refers to %s %s, not the Role %s", r.Kind, r.Name, b.role.Name))
	}
	if !slices.ContainsFunc(b.binding.Subjects, func(s rbacv1.Subject) bool { return s.Kind == "ServiceAccount" && s.Name == b.sa.Name }) {
		probs = append(probs, fmt.Sprintf("the RoleBinding does not bind the ServiceAccount %s", b.sa.Name))
	}
	var verbs []string
	for _, r := range b.role.Rules {
		if slices.Contains(r.APIGroups, "") && slices.Contains(r.Resources, "pods") {
			verbs = append(verbs, r.Verbs...)
		} else {
			probs = append(probs, fmt.Sprintf("the Role grants %v on %v: the provider needs pods only", r.Verbs, r.Resources))
		}
	}
	slices.Sort(verbs)
	want := b.providerVerbs
	if want == nil {
		want = []string{"get", "patch", "watch"} // the source not found: as read on v0.0.0-20240822202345
	}
	for _, v := range want {
		if !slices.Contains(verbs, v) {
			probs = append(probs, fmt.Sprintf("the Role lacks %s on pods, which the Kubernetes provider calls", v))
		}
	}
	for _, v := range verbs {
		if !slices.Contains(want, v) {
			probs = append(probs, fmt.Sprintf("the Role grants %s on pods, which the Kubernetes provider never calls", v))
		}
	}
	return probs
}

// protoactorVerbs reads the verbs protoactor-go's Kubernetes provider
// uses on pods from its source in the module cache (.Pods(ns).Get(...),
// .Watch, .Patch): nil when the module's source is not there.
func protoactorVerbs(t testing.TB) []string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/asynkron/protoactor-go").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Logf("protoactor-go's source not found (%v): its verbs taken as get, patch, watch", err)
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "cluster", "clusterproviders", "k8s", "*.go"))
	call := regexp.MustCompile(`\.Pods\((?:[^()]|\([^()]*\))*\)\.([A-Z][a-zA-Z]*)\(`)
	var verbs []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllSubmatch(src, -1) {
			verbs = append(verbs, strings.ToLower(string(m[1])))
		}
	}
	slices.Sort(verbs)
	verbs = slices.Compact(verbs)
	if len(verbs) == 0 {
		t.Fatalf("no .Pods(...).Verb( call found in %d files of protoactor's k8s provider: the reader is broken", len(files))
	}
	return verbs
}

// checkSelectors: the StatefulSet's, the PodDisruptionBudget's and every
// Service's selector select the pod template's labels, and the budget
// allows something. Mutations caught: a PDB selecting no pod (it guards
// nothing), one with neither maxUnavailable nor minAvailable.
func checkSelectors(b *bundle) []string {
	var probs []string
	pods := labels.Set(b.sts.Spec.Template.Labels)
	matches := func(s *metav1.LabelSelector) bool {
		sel, err := metav1.LabelSelectorAsSelector(s)
		return err == nil && s != nil && !sel.Empty() && sel.Matches(pods)
	}
	if !matches(b.sts.Spec.Selector) {
		probs = append(probs, "the StatefulSet's selector does not match its pods' labels")
	}
	if !matches(b.pdb.Spec.Selector) {
		probs = append(probs, "the PodDisruptionBudget's selector does not match the pods' labels")
	}
	if b.pdb.Spec.MaxUnavailable == nil && b.pdb.Spec.MinAvailable == nil {
		probs = append(probs, "the PodDisruptionBudget has neither maxUnavailable nor minAvailable")
	}
	for name, s := range b.services {
		if len(s.Spec.Selector) == 0 || !labels.SelectorFromSet(s.Spec.Selector).Matches(pods) {
			probs = append(probs, fmt.Sprintf("the Service %s selects no pod of the StatefulSet", name))
		}
	}
	return probs
}

// checkResources: cpu and memory requests, a memory limit at or above
// the request, no cpu limit (throttling stalls the media ticks).
// Mutations caught: the cpu or the memory request left out.
func checkResources(b *bundle) []string {
	var probs []string
	r := b.container().Resources
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := r.Requests[name]; !ok || q.IsZero() {
			probs = append(probs, fmt.Sprintf("no %s request: size it from the cost per call (the manifest's comment)", name))
		}
	}
	if lim, ok := r.Limits[corev1.ResourceMemory]; ok && lim.Cmp(r.Requests[corev1.ResourceMemory]) < 0 {
		probs = append(probs, "the memory limit is under the memory request")
	}
	if _, ok := r.Limits[corev1.ResourceCPU]; ok {
		probs = append(probs, "a cpu limit: CFS throttling stalls the 20 ms media ticks")
	}
	return probs
}

// checkServices: the StatefulSet's serviceName is a headless Service, and
// every Service port targets a port the container declares.
// Mutations caught: the headless Service given a cluster IP, a target
// port the pod lacks.
func checkServices(b *bundle) []string {
	var probs []string
	if h := b.services[b.sts.Spec.ServiceName]; h == nil || h.Spec.ClusterIP != corev1.ClusterIPNone {
		probs = append(probs, fmt.Sprintf("the StatefulSet's serviceName %q is not a headless Service (clusterIP: None)", b.sts.Spec.ServiceName))
	}
	for name, s := range b.services {
		for _, p := range s.Spec.Ports {
			_, proto, ok := b.port(p.TargetPort.String())
			if !ok || proto != p.Protocol {
				probs = append(probs, fmt.Sprintf("the Service %s's port %s targets %s/%s, which the container does not declare", name, p.Name, p.TargetPort.String(), p.Protocol))
			}
		}
	}
	if _, ok := b.services["brisvox"]; !ok {
		probs = append(probs, "no Service brisvox for the calls and the operator API")
	}
	return probs
}

// checkAgentMount: --agent is the ConfigMap's agent.toml where the pod
// mounts it. Mutation caught: --agent naming a file the volume lacks.
func checkAgentMount(b *bundle) []string {
	agent := b.args()["--agent"]
	dir, file := filepath.Dir(agent), filepath.Base(agent)
	if _, ok := b.config.Data[file]; !ok {
		return []string{fmt.Sprintf("--agent %s: the ConfigMap %s has no key %s", agent, b.config.Name, file)}
	}
	for _, m := range b.container().VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		for _, v := range b.sts.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil && v.ConfigMap.Name == b.config.Name {
				return nil
			}
		}
	}
	return []string{fmt.Sprintf("--agent %s: the ConfigMap %s is not mounted at %s", agent, b.config.Name, dir)}
}

// agentFile is the part of the agent file the checks read.
type agentFile struct {
	Transports struct {
		PCM struct {
			TokenEnv string `toml:"token_env"`
		} `toml:"pcm"`
		WebRTC struct {
			TokenEnv string `toml:"token_env"`
		} `toml:"webrtc"`
		SIP struct {
			UDP        string `toml:"udp"`
			RTPPortMin int    `toml:"rtp_port_min"`
			RTPPortMax int    `toml:"rtp_port_max"`
		} `toml:"sip"`
	} `toml:"transports"`
}

func (b *bundle) agent() (agentFile, error) {
	var a agentFile
	err := toml.Unmarshal([]byte(b.config.Data["agent.toml"]), &a)
	if err != nil {
		return a, fmt.Errorf("the ConfigMap's agent.toml: %v", err)
	}
	return a, nil
}

// checkDockerStages: a build stage on go.mod's Go that runs setup.sh's
// serve mode and builds ./cmd/brisvox with cgo, then a Debian 12 slim
// runtime that runs as a non-root user, checks /healthz on --addr's
// port, stops on SIGTERM and starts `brisvox serve --drain=...`.
// Mutations caught: another Go, another runtime base, setup.sh not run,
// the root user, no or the wrong health check, no STOPSIGNAL, an
// entrypoint without --drain.
func checkDockerStages(b *bundle) []string {
	var probs []string
	d := b.docker
	if len(d.stages) != 2 {
		return []string{fmt.Sprintf("the Dockerfile has %d stages, want build and runtime", len(d.stages))}
	}
	build, rt := d.stages[0], d.stages[1]
	if want := "golang:" + b.goVersion + "-bookworm"; build.from != want || build.name != "build" {
		probs = append(probs, fmt.Sprintf("the build stage is FROM %s AS %s, want %s AS build (go.mod's go %s)", build.from, build.name, want, b.goVersion))
	}
	if !build.has("RUN", "scripts/setup.sh serve") {
		probs = append(probs, "the build stage does not RUN scripts/setup.sh serve (the Debian packages and the pinned native files)")
	}
	if _, ok := build.goBuild(); !ok {
		probs = append(probs, "the build stage has no RUN CGO_ENABLED=1 go build ... -o /out/brisvox ./cmd/brisvox")
	}
	if rt.from != "debian:12-slim" {
		probs = append(probs, fmt.Sprintf("the runtime stage is FROM %s, want debian:12-slim (the build stage's bookworm)", rt.from))
	}
	if u := rt.last("USER"); u == "" || u == "root" || strings.HasPrefix(u, "0") {
		probs = append(probs, fmt.Sprintf("the runtime USER is %q: want a non-root uid", u))
	}
	cmd, _ := rt.exec("CMD")
	port := strconv.Itoa(addrPort(flagArgs(cmd)["--addr"]))
	if hc := rt.last("HEALTHCHECK"); !strings.Contains(hc, `"http://127.0.0.1:`+port+`/healthz"`) {
		probs = append(probs, fmt.Sprintf("the HEALTHCHECK %q does not ask /healthz on --addr's port %s", hc, port))
	}
	if s := rt.last("STOPSIGNAL"); s != "SIGTERM" {
		probs = append(probs, fmt.Sprintf("STOPSIGNAL %q: want SIGTERM (serve's drain)", s))
	}
	ep, err := rt.exec("ENTRYPOINT")
	if err != nil || len(ep) < 2 || filepath.Base(ep[0]) != "brisvox" || ep[1] != "serve" {
		probs = append(probs, fmt.Sprintf("the ENTRYPOINT %q is not brisvox serve in exec form", ep))
	}
	if b.imageDrain() <= 0 {
		probs = append(probs, "the ENTRYPOINT gives no --drain")
	}
	return probs
}

// checkDockerPins: the Dockerfile copies none of setup.sh's pins (so the
// two cannot diverge), and the runtime's native files are copied from
// where setup.sh put them in the build stage and named by the ENV the
// engine reads. Mutations caught: a sha256 of setup.sh written into the
// Dockerfile, the Silero model copied from another path.
func checkDockerPins(b *bundle) []string {
	var probs []string
	for _, k := range []string{"ORT_NPM", "ORT_TGZ_SHA256", "ORT_SHA256", "SILERO_NPM", "SILERO_TGZ_SHA256", "SILERO_SHA256"} {
		v := b.setup[k]
		if v == "" {
			probs = append(probs, fmt.Sprintf("scripts/setup.sh has no %s: the reader of its pins is broken", k))
		} else if strings.Contains(b.docker.text, v) {
			probs = append(probs, fmt.Sprintf("the Dockerfile copies setup.sh's %s: read it from setup.sh instead", k))
		}
	}
	if len(b.docker.stages) != 2 {
		return probs
	}
	native := strings.Replace(b.setup["NATIVE"], "$ROOT", b.docker.stages[0].last("WORKDIR"), 1)
	env := b.docker.stages[1].env()
	for _, f := range []struct{ dest, env string }{{"ORT_DEST", "BRISVOX_ORT_LIB"}, {"SILERO_DEST", "BRISVOX_SILERO_MODEL"}} {
		src := strings.Replace(b.setup[f.dest], "$NATIVE", native, 1)
		to, ok := b.docker.stages[1].copyFrom("build", src)
		switch {
		case !ok:
			probs = append(probs, fmt.Sprintf("the runtime stage does not COPY --from=build %s (setup.sh's %s)", src, f.dest))
		case env[f.env] != to:
			probs = append(probs, fmt.Sprintf("ENV %s=%q is not where %s is copied (%s)", f.env, env[f.env], f.dest, to))
		}
	}
	return probs
}

// checkDockerRuntime: the runtime installs packages and the agent's
// model, and no -dev package. (Which libraries the binary needs is
// TestBuildStage's, from the built binary.)
func checkDockerRuntime(b *bundle) []string {
	var probs []string
	pkgs := b.docker.runtimePackages()
	if len(pkgs) == 0 {
		return []string{"the runtime stage installs no package"}
	}
	for _, p := range pkgs {
		if strings.HasSuffix(p, "-dev") {
			probs = append(probs, fmt.Sprintf("the runtime stage installs %s: headers belong in the build stage", p))
		}
	}
	if !slices.Contains(pkgs, "curl") {
		probs = append(probs, "the runtime has no curl: the HEALTHCHECK and the preStop use it")
	}
	return probs
}

// checkExpose: EXPOSE names --addr's port, the SIP port of --sip-addr,
// the agent file's RTP range and the cluster port. Mutations caught: a
// narrower RTP range, the cluster port left out.
func checkExpose(b *bundle) []string {
	if len(b.docker.stages) != 2 {
		return nil
	}
	exposed := strings.Fields(b.docker.stages[1].last("EXPOSE"))
	a, err := b.agent()
	if err != nil {
		return []string{err.Error()}
	}
	cmd, _ := b.docker.stages[1].exec("CMD")
	sip := addrPort(b.args()["--sip-addr"])
	want := []string{
		fmt.Sprintf("%d/tcp", addrPort(flagArgs(cmd)["--addr"])),
		fmt.Sprintf("%d/udp", sip), fmt.Sprintf("%d/tcp", sip),
		fmt.Sprintf("%d-%d/udp", a.Transports.SIP.RTPPortMin, a.Transports.SIP.RTPPortMax),
		fmt.Sprintf("%d/tcp", addrPort(b.args()["--cluster-addr"])),
	}
	var probs []string
	for _, w := range want {
		if !slices.Contains(exposed, w) {
			probs = append(probs, fmt.Sprintf("EXPOSE %s lacks %s", strings.Join(exposed, " "), w))
		}
	}
	return probs
}

// checkDockerIgnore: the build context leaves out .native (setup.sh's
// downloads and the operator token of go tool task run) and .git.
// Mutation caught: .native not ignored (the token would be sent to the
// builder and could land in a layer by COPY . .).
func checkDockerIgnore(b *bundle) []string {
	var probs []string
	for _, want := range []string{".native", ".git"} {
		if !slices.Contains(b.ignore, want) {
			probs = append(probs, fmt.Sprintf(".dockerignore does not leave out %s", want))
		}
	}
	return probs
}

// checkNetworkPolicy: the policy selects the pods; the cluster port is
// reachable from the brisvox pods only (the remote has no
// authentication: any other pod could hang up calls), and the ports the
// Services route (HTTP, SIP) and the agent file's RTP range stay open.
// Mutations caught: the cluster port's rule without its from (every pod),
// the cluster port in the open rule, the RTP range left out, the policy
// selecting other pods.
func checkNetworkPolicy(b *bundle) []string {
	var probs []string
	pods := labels.Set(b.sts.Spec.Template.Labels)
	sel, err := metav1.LabelSelectorAsSelector(&b.policy.Spec.PodSelector)
	if err != nil || sel.Empty() || !sel.Matches(pods) || !slices.Contains(b.policy.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
		probs = append(probs, "the NetworkPolicy does not select the pods for ingress")
	}
	a, err := b.agent()
	if err != nil {
		return append(probs, err.Error())
	}
	// opens says which sources a rule lets reach the port: "" none, "pods"
	// the brisvox pods only, "any" anyone.
	opens := func(port int32, proto corev1.Protocol) string {
		got := ""
		for _, r := range b.policy.Spec.Ingress {
			for _, p := range r.Ports {
				num, end := int32(1), int32(65535) // no port: every port
				if p.Port != nil {
					num = p.Port.IntVal
					if p.Port.Type == intstr.String {
						num, _, _ = b.port(p.Port.StrVal)
					}
					end = num
				}
				if p.EndPort != nil {
					end = *p.EndPort
				}
				if p.Protocol == nil || *p.Protocol != proto || port < num || port > end {
					continue
				}
				from := "any"
				if len(r.From) > 0 {
					from = "pods"
					for _, peer := range r.From {
						s, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
						if peer.PodSelector == nil || peer.NamespaceSelector != nil || peer.IPBlock != nil || err != nil || s.Empty() || !s.Matches(pods) {
							from = "any"
						}
					}
				}
				if got != "any" {
					got = from
				}
			}
		}
		return got
	}
	cluster, _, _ := b.port("cluster")
	if o := opens(cluster, corev1.ProtocolTCP); o != "pods" {
		probs = append(probs, fmt.Sprintf("the cluster port %d is open to %q, want the brisvox pods only", cluster, o))
	}
	for _, name := range []string{"http", "sip-udp", "sip-tcp"} {
		port, proto, _ := b.port(name)
		if opens(port, proto) != "any" {
			probs = append(probs, fmt.Sprintf("the NetworkPolicy closes the %s port %d", name, port))
		}
	}
	for _, port := range []int{a.Transports.SIP.RTPPortMin, a.Transports.SIP.RTPPortMax} {
		if opens(int32(port), corev1.ProtocolUDP) != "any" {
			probs = append(probs, fmt.Sprintf("the NetworkPolicy closes the RTP port %d", port))
		}
	}
	return probs
}

// --- the Dockerfile ----------------------------------------------------------

type instruction struct {
	cmd, args string
}

type stage struct {
	from, name string
	ins        []instruction
}

type dockerfile struct {
	text   string
	stages []stage
}

// parseDockerfile reads instructions (continuation lines joined, comments
// dropped) into stages.
func parseDockerfile(text string) (*dockerfile, error) {
	d := &dockerfile{text: text}
	var cur strings.Builder
	flush := func() error {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return nil
		}
		cmd, args, _ := strings.Cut(line, " ")
		cmd = strings.ToUpper(cmd)
		args = strings.Join(strings.Fields(args), " ")
		if cmd == "FROM" {
			f := strings.Fields(args)
			s := stage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			d.stages = append(d.stages, s)
			return nil
		}
		if len(d.stages) == 0 {
			return fmt.Errorf("Dockerfile: %s before the first FROM", cmd)
		}
		s := &d.stages[len(d.stages)-1]
		s.ins = append(s.ins, instruction{cmd, args})
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if body, ok := strings.CutSuffix(strings.TrimRight(l, " \t"), `\`); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(l)
		if err := flush(); err != nil {
			return nil, err
		}
	}
	return d, flush()
}

func (d *dockerfile) final() *stage {
	if len(d.stages) == 0 {
		return &stage{}
	}
	return &d.stages[len(d.stages)-1]
}

func (s *stage) has(cmd, args string) bool {
	return slices.Contains(s.ins, instruction{cmd, args})
}

// last is the arguments of the stage's last cmd ("" if none).
func (s *stage) last(cmd string) string {
	for i := len(s.ins) - 1; i >= 0; i-- {
		if s.ins[i].cmd == cmd {
			return s.ins[i].args
		}
	}
	return ""
}

// exec is an exec-form (JSON array) instruction's words.
func (s *stage) exec(cmd string) ([]string, error) {
	var words []string
	err := json.Unmarshal([]byte(s.last(cmd)), &words)
	return words, err
}

func (s *stage) drop(cmd, args string) {
	s.ins = slices.DeleteFunc(s.ins, func(i instruction) bool { return i.cmd == cmd && (args == "" || i.args == args) })
}

func (s *stage) replace(cmd, old, new string) {
	for i := range s.ins {
		if s.ins[i].cmd == cmd {
			s.ins[i].args = strings.Replace(s.ins[i].args, old, new, 1)
		}
	}
}

// env is the stage's ENV assignments (KEY=VALUE form).
func (s *stage) env() map[string]string {
	out := map[string]string{}
	for _, in := range s.ins {
		if in.cmd != "ENV" {
			continue
		}
		for _, kv := range strings.Fields(in.args) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				out[k] = v
			}
		}
	}
	return out
}

// copyFrom is where the stage copies src of stage from to.
func (s *stage) copyFrom(from, src string) (string, bool) {
	for _, in := range s.ins {
		f := strings.Fields(in.args)
		if in.cmd == "COPY" && len(f) == 3 && f[0] == "--from="+from && f[1] == src {
			return f[2], true
		}
	}
	return "", false
}

// goBuild is the build stage's go build command line: the environment
// assignments and the go command's arguments.
func (s *stage) goBuild() (cmd []string, ok bool) {
	for _, in := range s.ins {
		f := strings.Fields(in.args)
		i := slices.Index(f, "go")
		if in.cmd != "RUN" || i < 0 || i+1 >= len(f) || f[i+1] != "build" || !slices.Contains(f[:i], "CGO_ENABLED=1") {
			continue
		}
		if o := slices.Index(f, "-o"); o > 0 && o+1 < len(f) && f[o+1] == "/out/brisvox" && f[len(f)-1] == "./cmd/brisvox" {
			return f, true
		}
	}
	return nil, false
}

// runtimePackages are the packages the final stage's apt-get install
// names.
func (d *dockerfile) runtimePackages() []string {
	var out []string
	for _, in := range d.final().ins {
		if in.cmd != "RUN" {
			continue
		}
		_, after, ok := strings.Cut(in.args, "apt-get install")
		if !ok {
			continue
		}
		after, _, _ = strings.Cut(after, "&&")
		for _, w := range strings.Fields(after) {
			if !strings.HasPrefix(w, "-") {
				out = append(out, w)
			}
		}
	}
	return out
}

// shellAssignments reads NAME="value" lines of a shell script.
func shellAssignments(src string) map[string]string {
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z][A-Z0-9_]*)="([^"]*)"$`).FindAllStringSubmatch(src, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// --- the build stage, run here ----------------------------------------------

// TestBuildStage runs the Dockerfile's build stage's go build command
// line (Docker is absent here: the build stage's apt and npm steps are
// scripts/setup.sh serve's, which `go tool task setup` runs on this
// machine) into a temporary directory, then checks the built binary: every
// flag the Dockerfile and the manifests give is one `brisvox serve` has
// (its -h), the ConfigMap's agent file passes `brisvox check` with a
// capacity of at least --max-calls, and every shared library it links is
// in a package the runtime stage installs (dpkg -S on this Debian 12
// machine, whose packages the runtime's are). Mutations caught (seen
// failing): a flag serve lacks (--cluster-adress), a package left out of
// the runtime (libopusfile0), --max-calls above the agent's capacity.
func TestBuildStage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds brisvox (-short)")
	}
	b := load(t)
	words, ok := b.docker.stages[0].goBuild()
	if !ok {
		t.Fatal("no go build in the build stage")
	}
	bin := filepath.Join(t.TempDir(), "brisvox")
	var env []string
	i := slices.Index(words, "go")
	env, words = words[:i], slices.Clone(words[i+1:])
	words[slices.Index(words, "-o")+1] = bin
	build := exec.CommandContext(t.Context(), "go", words...)
	build.Dir = root(t)
	build.Env = append(os.Environ(), env...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(words, " "), err, out)
	}

	t.Run("flags", func(t *testing.T) {
		known := serveFlags(t, bin)
		ep, _ := b.docker.final().exec("ENTRYPOINT")
		cmd, _ := b.docker.final().exec("CMD")
		for _, set := range []struct {
			where string
			args  []string
		}{{"the Dockerfile's ENTRYPOINT", ep[2:]}, {"the Dockerfile's CMD", cmd}, {"the StatefulSet's args", b.container().Args}} {
			for name := range flagArgs(set.args) {
				if !known[name] {
					t.Errorf("%s gives %s, which brisvox serve does not have", set.where, name)
				}
			}
		}
	})

	t.Run("agent", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "agent.toml")
		if err := os.WriteFile(file, []byte(b.config.Data["agent.toml"]), 0o600); err != nil {
			t.Fatal(err)
		}
		c := exec.CommandContext(t.Context(), bin, "check", file)
		c.Env = os.Environ()
		a, err := b.agent()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{a.Transports.PCM.TokenEnv, a.Transports.WebRTC.TokenEnv} {
			if v != "" {
				c.Env = append(c.Env, v+"="+randomSecret(t))
			}
		}
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("brisvox check of the ConfigMap's agent.toml: %v\n%s", err, out)
		}
		m := regexp.MustCompile(`capacity (\d+) calls`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("brisvox check printed no capacity: %s", out)
		}
		capacity, _ := strconv.Atoi(string(m[1]))
		if max, _ := strconv.Atoi(b.args()["--max-calls"]); max == 0 || max > capacity {
			t.Errorf("--max-calls=%s: want 1 to the agent's capacity %d (serve refuses more)", b.args()["--max-calls"], capacity)
		}
	})

	t.Run("prestop", func(t *testing.T) { preStopOnALiveServer(t, b, bin) })

	t.Run("libraries", func(t *testing.T) {
		if _, err := exec.LookPath("dpkg"); err != nil {
			t.Skip("no dpkg: the libraries' packages cannot be looked up here")
		}
		pkgs := b.docker.runtimePackages()
		check := func(what, file string) {
			f, err := elf.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			libs, err := f.ImportedLibraries()
			if err != nil {
				t.Fatal(err)
			}
			for _, lib := range libs {
				pkg, err := packageOf(lib)
				if err != nil {
					t.Errorf("%s links %s: %v", what, lib, err)
					continue
				}
				if !slices.Contains(pkgs, pkg) && !baseImage[pkg] {
					t.Errorf("%s links %s of the package %s, which the runtime stage does not install (%v)", what, lib, pkg, pkgs)
				}
			}
		}
		check("brisvox", bin)
		ort := filepath.Join(root(t), ".native", "onnxruntime", "libonnxruntime.so.1")
		if _, err := os.Stat(ort); err == nil {
			check("the ONNX Runtime library", ort)
		} else {
			t.Logf("no %s (go tool task setup): its libraries not checked", ort)
		}
	})
}

// preStopOnALiveServer runs the StatefulSet's preStop script against
// the built brisvox serving the ConfigMap's agent on a free loopback port
// (the script's address rewritten to it), with the operator token in the
// environment as the pod has it: the script must exit 0 within its bound,
// having drained the node (/readyz 503 "drained by an operator"), and
// serve must then stop on SIGTERM. Mutations caught (seen failing): the
// token header not sent (-K dropped: the drain answers 401, /readyz stays
// 200), the live-calls pattern not matching serve's /readyz (the script
// runs out its bound: the test's deadline).
func preStopOnALiveServer(t *testing.T, b *bundle, bin string) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl here (the image has it)")
	}
	env := os.Environ()
	for k, f := range map[string]string{"BRISVOX_ORT_LIB": "onnxruntime/libonnxruntime.so.1", "BRISVOX_SILERO_MODEL": "models/silero_vad_v5.onnx"} {
		if os.Getenv(k) != "" {
			continue
		}
		path := filepath.Join(root(t), ".native", f)
		if _, err := os.Stat(path); err != nil {
			t.Skipf("%s unset and no %s: go tool task setup", k, path)
		}
		env = append(env, k+"="+path)
	}
	a, err := b.agent()
	if err != nil {
		t.Fatal(err)
	}
	tokenVar := b.args()["--operator-token-env"]
	env = append(env, tokenVar+"="+randomSecret(t), a.Transports.PCM.TokenEnv+"="+randomSecret(t), "POD_NAME=brisvox-0")
	file := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(file, []byte(b.config.Data["agent.toml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	ep, _ := b.docker.final().exec("ENTRYPOINT")
	args := append(slices.Clone(ep[1:]), "--agent="+file, "--addr=127.0.0.1:0", "--sip-addr=127.0.0.1:0",
		"--operator-token-env="+tokenVar, "--node=brisvox-0", "--log-level=warn")
	srv := exec.Command(bin, args...)
	srv.Env = env
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	srv.Stderr = &stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
		exited <- srv.Wait()
	}()
	defer func() {
		_ = srv.Process.Kill()
		for range lines {
		}
		<-exited
	}()
	served := regexp.MustCompile(`serving agent .* on http://(127\.0\.0\.1:\d+)/`)
	var addr string
	deadline := time.After(2 * time.Minute)
	for addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("brisvox serve ended before serving: %s", stderr.String())
			}
			if m := served.FindStringSubmatch(l); m != nil {
				addr = m[1]
			}
		case <-deadline:
			t.Fatalf("brisvox serve did not serve within 2 minutes: %s", stderr.String())
		}
	}
	script := b.container().Lifecycle.PreStop.Exec.Command[2]
	script = strings.Replace(script, "api=http://127.0.0.1:"+strconv.Itoa(addrPort(b.args()["--addr"])), "api=http://"+addr, 1)
	hook := exec.CommandContext(t.Context(), "/bin/sh", "-c", script)
	hook.Env = env
	hookDone := make(chan error, 1)
	var hookOut bytes.Buffer
	hook.Stdout, hook.Stderr = &hookOut, &hookOut
	if err := hook.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { hookDone <- hook.Wait() }()
	select {
	case err := <-hookDone:
		if err != nil {
			t.Fatalf("the preStop script: %v\n%s", err, hookOut.String())
		}
	case <-time.After(30 * time.Second):
		_ = hook.Process.Kill()
		<-hookDone
		t.Fatalf("the preStop script still waits after 30 s with no call live: %s", hookOut.String())
	}
	if strings.Contains(hookOut.String(), "failed") {
		t.Errorf("the preStop script: %s", hookOut.String())
	}
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "drained by an operator") {
		t.Errorf("/readyz after the preStop: %d %s, want 503 drained by an operator", resp.StatusCode, body)
	}
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("brisvox serve after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(closingMargin):
		t.Errorf("brisvox serve did not stop within %v of SIGTERM with no call live", closingMargin)
	}
}

// baseImage are packages debian:12-slim has (required: the C library and
// GCC's runtime).
var baseImage = map[string]bool{"libc6": true, "libgcc-s1": true}

// packageOf is the Debian package holding a shared library of this
// machine.
func packageOf(lib string) (string, error) {
	triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[runtime.GOARCH]
	for _, dir := range []string{"/usr/lib/" + triplet, "/lib/" + triplet, "/usr/lib64", "/lib64"} {
		path := filepath.Join(dir, lib)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		out, err := exec.Command("dpkg", "-S", path).Output()
		if err != nil {
			continue
		}
		pkg, _, _ := strings.Cut(string(out), ":")
		return pkg, nil
	}
	return "", fmt.Errorf("no package of this machine holds it")
}

// serveFlags are `brisvox serve -h`'s flags (--name).
func serveFlags(t *testing.T, bin string) map[string]bool {
	var stderr bytes.Buffer
	c := exec.CommandContext(t.Context(), bin, "serve", "-h")
	c.Stderr = &stderr
	_ = c.Run() // -h exits 2
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(stderr.String(), -1) {
		known["--"+m[1]] = true
	}
	if !known["--agent"] || !known["--drain"] {
		t.Fatalf("brisvox serve -h listed no --agent or --drain: %s", stderr.String())
	}
	return known
}

func randomSecret(t *testing.T) string {
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(buf)
}
