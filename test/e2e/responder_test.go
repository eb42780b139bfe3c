//go:build e2e

package e2e

// The on-call path: every runbook's first command, as written, run as a
// person bound only to deploy/'s Role ocl-exporter-responder, through the
// real API server's port-forward to a kubelet stand-in built from the
// kubelet's own port-forward server.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ocl-exporter/ocl_exporter/deploy"
	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// onCallPod is the exporter's pod as the on-call path reaches it: the
// bundle's exporter, a Pod object of its Deployment on a Node whose
// kubelet is the stand-in, and oc on PATH.
type onCallPod struct {
	path     deploy.OnCall
	exporter bundleExporter
	pod      string
	// bin holds oc (kubectl: its port-forward is the code oc runs).
	bin string
	// secrets are the bytes no one on the on-call path may see: Secret
	// data (planted, and the serving key), the exporter's token.
	secrets [][]byte
}

// TestResponderRole: the on-call path works with the Role
// ocl-exporter-responder alone, and gives nothing more (responder_hostile_test.go).
func TestResponderRole(t *testing.T) {
	p := startOnCallPod(t)
	bindResponder(t, p)

	t.Run("every runbook's first command", func(t *testing.T) { runFirstCommands(t, p) })
	t.Run("nothing else", func(t *testing.T) { tryEverythingElse(t, p) })
}

// startOnCallPod runs the exporter as deploy/'s Deployment does, with a
// scenario's objects to report on and Secrets planted to look for.
func startOnCallPod(t *testing.T) *onCallPod {
	t.Helper()
	kubectl, kubelet := os.Getenv("E2E_KUBECTL"), os.Getenv("E2E_KUBELET_PORTFORWARD")
	for _, f := range []string{kubectl, kubelet} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%q: %v; run the suite with make e2e, which builds $E2E_KUBECTL and $E2E_KUBELET_PORTFORWARD", f, err)
		}
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("curl: %v; make e2e installs it", err)
	}
	path, err := deploy.BundleOnCall()
	if err != nil {
		t.Fatal(err)
	}
	play(t, scenario("seed004-build-failed"))
	p := &onCallPod{path: path, bin: t.TempDir(), secrets: plantSecrets(t)}
	if err := os.Symlink(kubectl, filepath.Join(p.bin, "oc")); err != nil {
		t.Fatal(err)
	}
	serviceCA, err := cluster.NewCA("e2e-responder-service-ca")
	if err != nil {
		t.Fatal(err)
	}
	p.exporter = startBundleExporter(t, t.TempDir(), serviceCA)
	tls, err := env.kube.CS.CoreV1().Secrets(path.Namespace).Get(t.Context(), "ocl-exporter-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.secrets = append(p.secrets, tls.Data["tls.key"])
	p.pod = runExporterPod(t, path, kubelet, map[string]string{path.Port: p.exporter.portForward, metricsPort(t): p.exporter.addr})
	return p
}

// plantSecrets puts a value in every Secret of the MCO namespace, as data
// and in the last-applied-configuration `kubectl apply` writes, and
// returns it (and its base64) with the exporter's token: what must not
// come out.
func plantSecrets(t *testing.T) [][]byte {
	t.Helper()
	canary := "e2e-canary-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	secrets := env.kube.CS.CoreV1().Secrets("openshift-machine-config-operator")
	list, err := secrets.List(t.Context(), metav1.ListOptions{})
	if err != nil || len(list.Items) == 0 {
		t.Fatalf("the scenario's Secrets: %v (%d)", err, len(list.Items))
	}
	for _, s := range list.Items {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data["e2e-canary"] = []byte(canary)
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = `{"data":{"e2e-canary":"` + canary + `"}}`
		if _, err := secrets.Update(t.Context(), &s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := clientcmd.LoadFromFile(env.cluster.ExporterKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	out := [][]byte{[]byte(canary), []byte(base64.StdEncoding.EncodeToString([]byte(canary)))}
	for _, u := range cfg.AuthInfos {
		out = append(out, []byte(u.Token))
	}
	return out
}

// metricsPort is the container port the Deployment serves on.
func metricsPort(t *testing.T) string {
	t.Helper()
	var d struct {
		Spec struct {
			Template struct{ Spec corev1.PodSpec } `json:"template"`
		} `json:"spec"`
	}
	if err := runtimeConvert(bundleObject(t, "Deployment", cluster.ExporterNamespace, "ocl-exporter").Object, &d); err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(int(d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort))
}

// runExporterPod creates a Pod of the bundle's Deployment, running on a
// Node whose kubelet is the stand-in: the API server proxies a
// port-forward to it, and it connects each of the pod's ports to the
// address ports maps it to, as CRI-O connects to localhost in the pod.
func runExporterPod(t *testing.T, path deploy.OnCall, kubelet string, ports map[string]string) string {
	t.Helper()
	ctx := t.Context()
	addr, err := cluster.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-listen", addr}
	for port, to := range ports {
		args = append(args, "-port", port+"="+to)
	}
	proc, err := cluster.StartProc(t.TempDir(), "kubelet-portforward", kubelet, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.Stop)
	waitListening(t, addr)
	_, port, _ := net.SplitHostPort(addr)
	kubeletPort, _ := strconv.Atoi(port)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-on-call-node"},
		Status: corev1.NodeStatus{
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(kubeletPort)}},
		},
	}
	if _, err := env.kube.CS.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.CS.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
	})

	var d struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := runtimeConvert(bundleObject(t, "Deployment", path.Namespace, path.Deployment).Object, &d); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: d.Spec.Template.ObjectMeta, Spec: d.Spec.Template.Spec}
	pod.Name, pod.Namespace, pod.Spec.NodeName = path.Deployment+"-e2e", path.Namespace, node.Name
	pods := env.kube.CS.CoreV1().Pods(path.Namespace)
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	t.Cleanup(func() {
		_ = pods.Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
	if _, err := pods.Patch(ctx, pod.Name, types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	return pod.Name
}

// waitListening waits until addr accepts connections.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", addr, err)
		}
	}
}

// bindResponder binds the Role to cluster.ResponderUser with the README's
// own command, run by oc as the admin, and waits until RBAC lets the
// responder port-forward.
func bindResponder(t *testing.T, p *onCallPod) {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	bind := commandLine(string(readme), "oc -n "+p.path.Namespace+" create rolebinding "+deploy.ResponderRole)
	if bind == "" {
		t.Fatalf("README.md has no `oc -n %s create rolebinding %s` command", p.path.Namespace, deploy.ResponderRole)
	}
	bind = strings.ReplaceAll(bind, "<user>", cluster.ResponderUser)
	if out, err := p.shell(t.Context(), env.cluster.AdminKubeconfig, bind).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", bind, err, out)
	}
	t.Cleanup(func() {
		_ = env.kube.CS.RbacV1().RoleBindings(p.path.Namespace).Delete(context.Background(), deploy.ResponderRole+":"+cluster.ResponderUser, metav1.DeleteOptions{})
	})
	cs := clientOf(t, env.cluster.ResponderKubeconfig)
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
		Namespace: p.path.Namespace, Verb: "create", Resource: "pods", Subresource: "portforward", Name: p.pod}}}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(), review, metav1.CreateOptions{})
		if err == nil && r.Status.Allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the responder still may not port-forward: %v", bind, err)
		}
	}
}

// commandLine is the first line of a code block of markdown that starts
// with prefix, continuation lines joined.
func commandLine(markdown, prefix string) string {
	var cmd string
	inBlock := false
	for _, l := range strings.Split(markdown, "\n") {
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "```"):
			inBlock = !inBlock
		case !inBlock:
		case cmd != "" || strings.HasPrefix(strings.TrimSpace(l), prefix):
			cmd += strings.TrimSpace(l)
			if strings.HasSuffix(cmd, `\`) {
				cmd = strings.TrimSuffix(cmd, `\`)
				continue
			}
			return cmd
		}
	}
	return ""
}

func clientOf(t *testing.T, kubeconfig string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// shell runs a command line in bash as the person whose kubeconfig is
// given, with oc on PATH, as their workstation would. It runs in a
// process group of its own, killed whole when ctx ends: a port-forward
// it left in the background would hold its output open.
func (p *onCallPod) shell(ctx context.Context, kubeconfig, line string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Env = []string{"PATH=" + p.bin + ":" + os.Getenv("PATH"), "KUBECONFIG=" + kubeconfig, "HOME=" + p.bin}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// firstCommand is the first code line of a runbook's Diagnosis that runs
// the on-call path.
var firstCommand = regexp.MustCompile("(?m)^## Diagnosis\n(?:[^`]|`[^`])*```console\n(?:.*\n)*?(oc -n \\S+ port-forward .*)\n")

// runFirstCommands runs each runbook's first command, as written but the
// workstation's port (a free one, for the one the command names) and the
// pool, as the responder: it prints the exporter's report. The same
// command as a person without the Role is refused.
func runFirstCommands(t *testing.T, p *onCallPod) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "runbooks", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no runbooks: %v", err)
	}
	runbooks := map[string][]string{} // command: runbooks
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := firstCommand.FindSubmatch(b)
		if m == nil {
			t.Errorf("%s: no first command through the on-call path", filepath.Base(f))
			continue
		}
		runbooks[string(m[1])] = append(runbooks[string(m[1])], filepath.Base(f))
	}
	for line, names := range runbooks {
		out, stderr, err := p.run(t, env.cluster.ResponderKubeconfig, line, "layered")
		if err != nil || !strings.HasPrefix(out, "OCL diagnosis at") || !strings.Contains(out, "Pool layered") {
			t.Errorf("%s, first command of %s, as %s: %v\nstdout:\n%s\nstderr:\n%s", line, names, cluster.ResponderUser, err, out, stderr)
			continue
		}
		direct := p.status(t, strings.Contains(line, "?pool="))
		if got, want := verdictLine(out), verdictLine(direct); got != want {
			t.Errorf("%s: %q, the exporter's /status says %q", line, got, want)
		}
		t.Logf("%d runbooks' first command works as %s: %s\n%s", len(names), cluster.ResponderUser, line, firstLines(out, 4))
	}
	// The Role, not the setup, makes it work: the forward the command
	// opens is refused to a person without it (the whole command would
	// then wait out curl's retries).
	for line := range runbooks {
		forward, _, _ := strings.Cut(line, " >/dev/null &")
		out, stderr, err := p.run(t, env.cluster.NobodyKubeconfig, forward+" >/dev/null && curl 'localhost:"+p.path.Port+"/'", "layered")
		if err == nil || !strings.Contains(stderr, "forbidden") {
			t.Errorf("%s as %s, who has no role: %v\nstdout:\n%s\nstderr:\n%s", forward, cluster.NobodyUser, err, out, stderr)
		}
		break
	}
}

// run runs a first command as written, for pool, with a free port of the
// workstation in place of the one it names (the test machine's may be
// taken).
func (p *onCallPod) run(t *testing.T, kubeconfig, line, pool string) (stdout, stderr string, err error) {
	t.Helper()
	local, err := cluster.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	forward, url := "deploy/"+p.path.Deployment+" "+p.path.Port+" ", "localhost:"+p.path.Port+"/"
	if !strings.Contains(line, forward) || !strings.Contains(line, url) {
		t.Fatalf("%s: no %q and %q to run it on a free port", line, forward, url)
	}
	line = strings.ReplaceAll(line, forward, "deploy/"+p.path.Deployment+" "+local[0]+":"+p.path.Port+" ")
	line = strings.ReplaceAll(strings.ReplaceAll(line, url, "localhost:"+local[0]+"/"), "<pool>", pool)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := p.shell(ctx, kubeconfig, line)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever it left
	}
	return out.String(), errOut.String(), err
}

// status is the exporter's text report, read directly.
func (p *onCallPod) status(t *testing.T, pool bool) string {
	t.Helper()
	url := "http://" + p.exporter.portForward + "/status"
	if pool {
		url += "?pool=layered"
	}
	code, body := httpGet(t, url, nil)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	return body
}

func verdictLine(report string) string {
	sc := bufio.NewScanner(strings.NewReader(report))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "Verdict:") {
			return sc.Text()
		}
	}
	return ""
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// leaked returns the secrets b holds.
func (p *onCallPod) leaked(b []byte) []string {
	var out []string
	for _, s := range p.secrets {
		if len(s) > 0 && bytes.Contains(b, bytes.TrimSpace(s)) {
			out = append(out, string(s[:min(len(s), 16)])+"...")
		}
	}
	return slices.Compact(out)
}
