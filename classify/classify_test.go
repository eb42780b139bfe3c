package classify

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

type corpusCase struct {
	Origin Origin `json:"origin"`
	Reason string `json:"reason,omitempty"`
	Text   string `json:"text"`
	Class  Class  `json:"class"`
	Note   string `json:"note"`
}

func loadCorpus(tb testing.TB) []corpusCase {
	tb.Helper()
	b, err := os.ReadFile("testdata/corpus.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	var cases []corpusCase
	if err := yaml.UnmarshalStrict(b, &cases); err != nil {
		tb.Fatalf("testdata/corpus.yaml: %v", err)
	}
	return cases
}

// checkResult fails unless r holds for any input: a known class and a
// short, trimmed, valid UTF-8 excerpt.
func checkResult(tb testing.TB, r Result) {
	tb.Helper()
	if !slices.Contains(classes, r.Class) {
		tb.Errorf("class %q is not in Classes()", r.Class)
	}
	if len(r.Excerpt) > MaxExcerpt {
		tb.Errorf("excerpt is %d bytes, want at most %d: %q", len(r.Excerpt), MaxExcerpt, r.Excerpt)
	}
	if !utf8.ValidString(r.Excerpt) {
		tb.Errorf("excerpt is not valid UTF-8: %q", r.Excerpt)
	}
	if strings.TrimSpace(r.Excerpt) != r.Excerpt {
		tb.Errorf("excerpt is not trimmed: %q", r.Excerpt)
	}
}

func TestCorpus(t *testing.T) {
	cases := loadCorpus(t)
	if len(cases) < 110 {
		t.Errorf("corpus has %d cases, want at least 110", len(cases))
	}
	for i, c := range cases {
		if _, ok := originStages[c.Origin]; !ok {
			t.Errorf("case %d: unknown origin %q", i, c.Origin)
		}
		if c.Note == "" {
			t.Errorf("case %d: no note on where the wording comes from", i)
		}
		got := Classify(Message{Origin: c.Origin, Reason: c.Reason, Text: c.Text})
		if got.Class != c.Class {
			t.Errorf("case %d (%s): origin %s, reason %q: want %s, got %s\n\texcerpt: %s",
				i, c.Note, c.Origin, c.Reason, c.Class, got.Class, got.Excerpt)
		}
		checkResult(t, got)
	}
}

// classDocs is docs/classes.md: one "## class" section per class, and the
// reference definitions of the runbooks the sections link to.
type classDocs struct {
	sections map[Class]string
	runbooks map[string]string // link label to target
}

var runbookDef = regexp.MustCompile(`^\[(\w+)\]: (\S+)$`)

func readClassDocs(t *testing.T) classDocs {
	t.Helper()
	b, err := os.ReadFile("../docs/classes.md")
	if err != nil {
		t.Fatal(err)
	}
	d := classDocs{sections: map[Class]string{}, runbooks: map[string]string{}}
	var cur Class
	for line := range strings.Lines(string(b)) {
		if m := runbookDef.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			d.runbooks[m[1]] = m[2]
			continue
		}
		if name, ok := strings.CutPrefix(line, "## "); ok {
			cur = Class(strings.Trim(name, "` \n"))
			if _, dup := d.sections[cur]; dup {
				t.Errorf("docs/classes.md: %s documented twice", cur)
			}
			d.sections[cur] = ""
			continue
		}
		if cur != "" {
			d.sections[cur] += line
		}
	}
	return d
}

func TestClassDocs(t *testing.T) {
	docs := readClassDocs(t)
	for label, target := range docs.runbooks {
		if want := "../runbooks/" + label + ".md"; target != want {
			t.Errorf("docs/classes.md: [%s] points to %s, want %s", label, target, want)
		}
	}
	perClass := map[Class]int{}
	for _, c := range loadCorpus(t) {
		perClass[c.Class]++
	}
	for _, c := range Classes() {
		body, ok := docs.sections[c]
		if !ok {
			t.Errorf("class %s has no section in docs/classes.md", c)
		}
		linked := false
		for label := range docs.runbooks {
			linked = linked || strings.Contains(body, "["+label+"]")
		}
		if ok && !linked {
			t.Errorf("docs/classes.md: section %s links no runbook", c)
		}
		if n := perClass[c]; n < 3 {
			t.Errorf("class %s has %d corpus cases, want at least 3", c, n)
		}
	}
	for c := range docs.sections {
		if !slices.Contains(classes, c) {
			t.Errorf("docs/classes.md documents %q, which is not in Classes()", c)
		}
	}
	for _, r := range rules {
		for _, c := range []Class{r.class, r.push} {
			if c != "" && !slices.Contains(classes, c) {
				t.Errorf("rule %q: class %q is not in Classes()", r.why, c)
			}
		}
	}
	for s, c := range signals {
		if !slices.Contains(classes, c) {
			t.Errorf("signal %v: class %q is not in Classes()", s, c)
		}
	}
}

func TestClassesIsACopy(t *testing.T) {
	c := Classes()
	c[0] = "mutated"
	if Classes()[0] == "mutated" {
		t.Error("Classes() exposes the package's slice")
	}
	if got := Classes()[len(c)-1]; got != Unknown {
		t.Errorf("last class is %s, want %s", got, Unknown)
	}
}

func TestExcerpt(t *testing.T) {
	pad := strings.Repeat("é", 400) // two bytes each: cuts must respect runes
	tests := []struct {
		name string
		msg  Message
		want Class
		has  string
	}{
		{
			name: "match deep in a long line keeps the match",
			msg:  Message{Origin: OriginNodeReason, Text: pad + " reading manifest latest in quay.io/x/y: manifest unknown " + pad},
			want: ImageNotFound,
			has:  "manifest unknown",
		},
		{
			name: "invalid UTF-8 and control characters",
			msg:  Message{Origin: OriginNodeReason, Text: "\xff\xfe no space left on device\x00\x1b[0m \xc3"},
			want: DiskFull,
			has:  "\uFFFD no space left on device",
		},
		{
			// What the /status page drops: C1 controls (CSI U+009B), bidi
			// overrides and isolates, zero-width characters.
			name: "C1, bidi and zero-width characters",
			msg:  Message{Origin: OriginNodeReason, Text: "\u202eerror:\u2066 no space left on device\u009b31m wr\u200bite\ufeff"},
			want: DiskFull,
			has:  "error: no space left on device31m write",
		},
		{
			name: "Unicode spaces around a short line",
			msg:  Message{Origin: OriginNodeReason, Text: "\u00a0no space left on device\u2003"},
			want: DiskFull,
			has:  "no space left on device",
		},
		{
			name: "structured reason quotes the last line",
			msg:  Message{Origin: OriginPodStatus, Reason: "Evicted", Text: "first\nThe node was low on resource: memory.\n\n"},
			want: PodEvicted,
			has:  "Evicted: The node was low on resource: memory.",
		},
		{
			name: "unknown quotes the last error line",
			msg:  Message{Origin: OriginBuildLog, Text: "STEP 1/2: FROM x\nerror: exit status 1\nStoring signatures\n"},
			want: Unknown,
			has:  "error: exit status 1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(tt.msg)
			checkResult(t, got)
			if got.Class != tt.want {
				t.Errorf("class %s, want %s", got.Class, tt.want)
			}
			if !strings.Contains(got.Excerpt, tt.has) {
				t.Errorf("excerpt %q does not contain %q", got.Excerpt, tt.has)
			}
		})
	}
}

// TestBoundedInput checks that only the tail of a huge message is read: the
// cause at its start is out of reach, the one at its end is found.
func TestBoundedInput(t *testing.T) {
	head := "Error: Unable to find a match: foo\n"
	filler := strings.Repeat("error: something unrelated happened here\n", 50000) // 2 MB
	got := Classify(Message{Origin: OriginBuildLog, Text: head + filler})
	checkResult(t, got)
	if got.Class != Unknown {
		t.Errorf("cause %d bytes before the end was read: %+v", len(filler), got)
	}
	got = Classify(Message{Origin: OriginBuildLog, Text: filler + head})
	if got.Class != PackageNotFound {
		t.Errorf("cause at the end: got %+v", got)
	}
	got = Classify(Message{Origin: OriginNodeReason, Text: strings.Repeat("x", 1<<20) + " manifest unknown"})
	if got.Class != ImageNotFound {
		t.Errorf("one huge line: got %+v", got)
	}
}

func FuzzClassify(f *testing.F) {
	for _, c := range loadCorpus(f) {
		f.Add(string(c.Origin), c.Reason, c.Text)
	}
	// The real corpus's texts too, read as a log and as one message.
	b, err := os.ReadFile("testdata/real.yaml")
	if err != nil {
		f.Fatal(err)
	}
	var realCases []struct {
		Reason string `json:"reason"`
		Text   string `json:"text"`
	}
	if err := yaml.Unmarshal(b, &realCases); err != nil {
		f.Fatalf("testdata/realCases.yaml: %v", err)
	}
	for _, c := range realCases {
		f.Add(string(OriginBuildLog), c.Reason, c.Text)
		f.Add(string(OriginNodeReason), c.Reason, c.Text)
	}
	f.Fuzz(func(t *testing.T, origin, reason, text string) {
		checkResult(t, Classify(Message{Origin: Origin(origin), Reason: reason, Text: text}))
	})
}

// benchLog is a typical image-build termination message: a 2 KB tail of
// buildah output ending in a failed RUN step.
var benchLog = strings.Join([]string{
	`Writing manifest to image destination`,
	`Storing signatures`,
	`time="2025-10-17T10:51:19Z" level=debug msg="Pull of configs resolved to image 4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d"`,
	`STEP 10/12: FROM configs AS final`,
	`time="2025-10-17T10:51:19Z" level=debug msg="FROM "configs""`,
	`time="2025-10-17T10:51:19Z" level=debug msg="using "/var/tmp/buildah2436127760" to hold bundle data"`,
	`STEP 11/12: RUN dnf install -y tmux-nonexistent && dnf clean all`,
	`time="2025-10-17T10:51:20Z" level=debug msg="Running &exec.Cmd{Path:\"/bin/sh\", Args:[]string{\"/bin/sh\", \"-c\", \"dnf install -y tmux-nonexistent && dnf clean all\"}, Env:[]string{\"HTTP_PROXY=\", \"HTTPS_PROXY=\", \"NO_PROXY=\", \"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\", \"HOSTNAME=0430829320a1\", \"HOME=/root\"}, Dir:\"/\"} (PATH = \"\")"`,
	`Updating Subscription Management repositories.`,
	`Red Hat Enterprise Linux 9 for x86_64 - BaseOS (RPMs)        42 MB/s |  83 MB     00:01`,
	`Red Hat Enterprise Linux 9 for x86_64 - AppStream (RPMs)     38 MB/s |  71 MB     00:01`,
	`Red Hat OpenShift Container Platform 4.20 for RHEL 9 (RPMs)  12 MB/s |  21 MB     00:01`,
	`Red Hat Enterprise Linux 9 for x86_64 - Supplementary (RPMs)  1.2 MB/s | 210 kB     00:00`,
	`Last metadata expiration check: 0:00:03 ago on Mon Oct 17 10:51:20 2025.`,
	`No match for argument: tmux-nonexistent`,
	`Error: Unable to find a match: tmux-nonexistent`,
	`subprocess exited with status 1`,
	`subprocess exited with status 1`,
	`time="2025-10-17T10:51:32Z" level=debug msg="Error building at step {Env:[HTTP_PROXY= HTTPS_PROXY= NO_PROXY= PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin] Command:run Args:[dnf install -y tmux-nonexistent && dnf clean all] Flags:[] Attrs:map[] Message:RUN dnf install -y tmux-nonexistent && dnf clean all Heredocs:[] Original:RUN dnf install -y tmux-nonexistent && dnf clean all}: exit status 1"`,
	`time="2025-10-17T10:51:32Z" level=debug msg="Shutting down the storage driver"`,
	`Error: building at STEP "RUN dnf install -y tmux-nonexistent && dnf clean all": exit status 1`,
}, "\n")

// benchReason is the node reason of seed 002 in the MCD's current format.
const benchReason = "failed to update OS to quay.io/sregidor/sregidor-os@sha256:8761d4273f3213f2f9c9b4aa9dbe33aa758f17d691f0f53d2b20f55702c9ef13 after retries: " +
	"error running rpm-ostree rebase --experimental ostree-unverified-registry:quay.io/sregidor/sregidor-os@sha256:8761d4273f3213f2f9c9b4aa9dbe33aa758f17d691f0f53d2b20f55702c9ef13: " +
	"error: Creating importer: failed to invoke method OpenImage: failed to invoke method OpenImage: reading manifest sha256:8761d4273f3213f2f9c9b4aa9dbe33aa758f17d691f0f53d2b20f55702c9ef13 in quay.io/sregidor/sregidor-os: manifest unknown\n" +
	": exit status 1: timed out waiting for the condition"

func BenchmarkClassify(b *testing.B) {
	for _, bc := range []struct {
		name string
		msg  Message
		want Class
	}{
		{"build_log_2KB", Message{Origin: OriginBuildLog, Text: benchLog}, PackageNotFound},
		{"node_reason", Message{Origin: OriginNodeReason, Text: benchReason}, ImageNotFound},
	} {
		b.Run(fmt.Sprintf("%s_%dB", bc.name, len(bc.msg.Text)), func(b *testing.B) {
			if got := Classify(bc.msg).Class; got != bc.want {
				b.Fatalf("got %s, want %s", got, bc.want)
			}
			b.SetBytes(int64(len(bc.msg.Text)))
			b.ReportAllocs()
			for b.Loop() {
				Classify(bc.msg)
			}
		})
	}
}

// TestExcerptCutsAtWords: an excerpt cut from a long line starts and
// ends on whole words, marked with an ellipsis, as the operator's
// Degraded message of the example shows.
func TestExcerptCutsAtWords(t *testing.T) {
	msg := "Failed to resync 4.20.0-0-2025-10-16-080835-test-ci-ln-bfn63jk-latest because: could not update Machine OS Builder deployment: " +
		`could not validate renderedImagePushSecret "gpu-push-secret" for MachineOSConfig gpu: secret gpu-push-secret from gpu is not found. Did you use the right secret name?`
	got := Classify(Message{Origin: OriginClusterOperator, Reason: "MachineOSBuilderFailed", Text: msg})
	ex, ok := strings.CutPrefix(got.Excerpt, ellipsis)
	if !ok {
		t.Fatalf("excerpt %q is not cut at its start", got.Excerpt)
	}
	first := strings.Fields(ex)[0]
	if !strings.Contains(msg, " "+first+" ") {
		t.Errorf("excerpt %q starts inside a word (%q)", got.Excerpt, first)
	}
	long := strings.Repeat("word ", 30) + "manifest unknown " + strings.Repeat("trailing ", 40)
	got = Classify(Message{Origin: OriginNodeReason, Text: long})
	ex, ok = strings.CutSuffix(got.Excerpt, ellipsis)
	if !ok || !strings.HasSuffix(ex, "trailing") {
		t.Errorf("excerpt %q does not end on a whole word with an ellipsis", got.Excerpt)
	}
}
