package snapshot

// The forms a must-gather reaches a support engineer in, beside the tree
// the gather wrote: what macOS adds to it, what cuts it short, what
// cleans it. docs/coverage.md's table of forms says what each holds and
// how it reads.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// macMetadata: files macOS adds, never a Kubernetes object. An archive
// made on macOS carries an AppleDouble "._<name>" entry before each file
// with extended attributes (libarchive archive_write_set_format_pax.c
// archive_write_pax_header, the copyfile(3) blob that
// archive_read_disk_entry_from_file.c setup_mac_metadata packs; bsdtar's
// --mac-metadata, on by default in c mode), which any other tar extracts
// as a file; Finder leaves .DS_Store in the directories it shows and
// its zip archives put the AppleDouble files under __MACOSX/.
func macMetadata(p string) bool {
	base := path.Base(p)
	return strings.HasPrefix(base, "._") || base == ".DS_Store" || slices.Contains(strings.Split(p, "/"), "__MACOSX")
}

// Files about how a must-gather was made, read before its objects.
const (
	// gatherLogFile is the gather container's log, beside the image's
	// files (openshift/oc pkg/cli/admin/mustgather/mustgather.go
	// copyFilesFromPod), and mustGatherLogFile oc's own log at the root
	// (Run): both carry what the disk usage checker printed.
	gatherLogFile     = "gather.logs"
	mustGatherLogFile = "must-gather.logs"
	// cleanWatermarkFile and cleanReportFile are what must-gather-clean
	// writes (pkg/watermarker WriteWaterMarkFile into the output folder;
	// pkg/cli Run's report.yaml, in the current directory unless -r).
	cleanWatermarkFile = "watermark.txt"
	cleanReportFile    = "report.yaml"
)

// formRole is the role of a file other tools than inspect write into a
// must-gather, by its name; ok false for any other file.
func formRole(p string) (pathRole, bool) {
	switch path.Base(p) {
	case gatherLogFile, mustGatherLogFile:
		return roleGatherLog, true
	case cleanWatermarkFile:
		return roleCleanMark, true
	case cleanReportFile:
		return roleCleanReport, true
	}
	return roleSkip, false
}

// volumeCutMarker is what `oc adm must-gather`'s disk usage checker prints
// before it kills the gather at --volume-percentage (mustgather.go
// volumeUsageCheckerScript: "Disk usage exceeds the volume percentage of
// %d for mounted directory. Exiting..." in release-4.16 ... 4.19, then
// "[disk usage checker] Disk usage exceeds the volume percentage of ...,
// terminating..."). The gather is SIGKILLed mid-file; what it had
// written is copied all the same.
const volumeCutMarker = "Disk usage exceeds the volume percentage"

// saysVolumeCut reads r, a gather's log, for the disk usage checker's
// kill, in chunks: a log is read once and never held.
func saysVolumeCut(r io.Reader) (bool, error) {
	buf := make([]byte, 64<<10)
	keep := len(volumeCutMarker) - 1
	n := 0
	for {
		m, err := r.Read(buf[n:])
		n += m
		if bytes.Contains(buf[:n], []byte(volumeCutMarker)) {
			return true, nil
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if n > keep {
			n = copy(buf, buf[n-keep:n])
		}
	}
}

// gatherLogNote is what an archive keeps of a gather's log: the disk
// usage checker's kill, if it says so.
func gatherLogNote(r io.Reader) ([]byte, error) {
	if cut, err := saysVolumeCut(r); !cut || err != nil {
		return nil, err
	}
	return []byte(volumeCutMarker), nil
}

// cleanReport is what diagnose reads of must-gather-clean's report.yaml
// (pkg/reporting reporter.go Report): the files it omitted and the omit
// rules it ran, never its replacements (they map obfuscated values back to
// the real ones).
type cleanReport struct {
	Omissions []string `json:"omissions"`
	Config    struct {
		Omit []struct {
			Type               string `json:"type"`
			KubernetesResource *struct {
				Kind       string   `json:"kind"`
				APIVersion string   `json:"apiVersion"`
				Namespaces []string `json:"namespaces"`
			} `json:"kubernetesResource"`
		} `json:"omit"`
	} `json:"config"`
}

// readCleanReport reads a report.yaml; ok is false for a file of that
// name that is not must-gather-clean's.
func readCleanReport(r io.Reader, limit int64) (rep cleanReport, ok bool, _ error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return rep, false, err
	}
	if int64(len(b)) > limit {
		return rep, false, fmt.Errorf("more than the %d bytes a snapshot file may hold", limit)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil || json.Unmarshal(j, &rep) != nil {
		return rep, false, nil
	}
	return rep, rep.Omissions != nil || rep.Config.Omit != nil, nil
}

// forms are what other tools did to a must-gather after its gather wrote
// it, each naming the file that says so.
type forms struct {
	volumeCut string // the gather log whose checker killed the gather
	cleaned   string // must-gather-clean's watermark or report
	// omitted says, for each kind in a namespace ("" cluster-scoped),
	// why must-gather-clean's rules removed every file holding one: a
	// file of it still there held none (an empty List is kept).
	omitted map[scope]string
	// lost says why files of a kind that was gathered are missing or
	// cut: the kind is not captured, whatever else the must-gather holds
	// of it.
	lost map[scope]string
}

// altered reports whether files may be missing from where the gather
// wrote them.
func (f *forms) altered() bool { return f.volumeCut != "" || f.cleaned != "" }

// cleanedBy notes what report (read from file) says must-gather-clean
// removed: every kind an omit rule names, and the kind of every path it
// lists, of the resources the exporter reads.
func (f *forms) cleanedBy(file string, rep cleanReport, mco string) {
	if f.cleaned == "" {
		f.cleaned = file
	}
	for _, o := range rep.Config.Omit {
		k := o.KubernetesResource
		if o.Type != "Kubernetes" || k == nil {
			continue
		}
		for _, r := range Resources() {
			gv, _ := schema.ParseGroupVersion(k.APIVersion)
			ns := r.WatchNamespace(mco)
			if r.Kind != k.Kind || (k.APIVersion != "" && gv.Group != r.GVR.Group) || (len(k.Namespaces) > 0 && !slices.Contains(k.Namespaces, ns)) {
				continue
			}
			if f.omitted == nil {
				f.omitted = map[scope]string{}
			}
			f.omitted[scope{schema.GroupKind{Group: r.GVR.Group, Kind: r.Kind}, ns}] = fmt.Sprintf("must-gather-clean removed every file holding a %s (%s: omit rule of kind %s)", r.Kind, file, k.Kind)
		}
	}
	for _, p := range rep.Omissions {
		segs := strings.Split(strings.TrimPrefix(path.Clean("/"+p), "/"), "/")
		if i := layoutIndex(segs); i >= 0 {
			if mp := classifyMustGather(segs[i:], mco); mp.role == roleObjects {
				f.lose(scope{mp.gk, mp.namespace}, fmt.Sprintf("must-gather-clean removed %s (%s lists it)", path.Join(segs[i:]...), file))
			}
		}
	}
}

// absentWhy says why a kind the must-gather holds no file of is not
// captured, when one of its forms says: "" when none does.
func (f *forms) absentWhy(s scope) string {
	if why, ok := f.omitted[s]; ok {
		return why
	}
	switch {
	case f.volumeCut != "":
		return fmt.Sprintf("no file of it, and the gather was stopped at the volume limit (%s says so) before it wrote what it had left", f.volumeCut)
	case f.cleaned != "":
		return fmt.Sprintf("no file of it, and must-gather-clean ran on the must-gather (%s), which removes files whole: by default every file holding a Secret, a ConfigMap or a MachineConfig", f.cleaned)
	}
	return ""
}

// lose notes the first reason files of s are missing or cut.
func (f *forms) lose(s scope, why string) {
	if f.lost == nil {
		f.lost = map[scope]string{}
	}
	if _, ok := f.lost[s]; !ok {
		f.lost[s] = why
	}
}

// readForms reads, before any object, what says how the must-gather was
// altered after its gather: the gather's logs, must-gather-clean's
// watermark and report.
func (l loader) readForms(t *tree, cov *coverage) error {
	for _, f := range t.files {
		if f.role != roleGatherLog && f.role != roleCleanMark && f.role != roleCleanReport {
			continue
		}
		r, err := t.open(f.name)
		if err != nil {
			return err
		}
		err = l.readForm(f, r, cov)
		r.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	if f := cov.forms.volumeCut; f != "" {
		l.logger.Warn("the gather was stopped at the volume limit (oc adm must-gather --volume-percentage): a file it was writing when killed, and what it had not written yet, read as not captured; what it had written is read", "file", f)
	}
	if f := cov.forms.cleaned; f != "" {
		l.logger.Info("must-gather-clean ran on the must-gather: what it removed reads as not captured", "file", f)
	}
	return nil
}

func (l loader) readForm(f treeFile, r io.Reader, cov *coverage) error {
	switch f.role {
	case roleGatherLog:
		cut, err := saysVolumeCut(r)
		if cut && cov.forms.volumeCut == "" {
			cov.forms.volumeCut = f.name
		}
		return err
	case roleCleanMark:
		if cov.forms.cleaned == "" {
			cov.forms.cleaned = f.name
		}
	case roleCleanReport:
		rep, ok, err := readCleanReport(r, l.maxBytes)
		if ok {
			cov.forms.cleanedBy(f.name, rep, l.namespace)
		}
		return err
	}
	return nil
}

// checkComplete reports a file of a gather stopped at the volume limit
// that ends where inspect never ends one: inside a line (its YAML
// printer ends every file with a newline), or in a List before its kind
// (printed after the items: the keys are sorted).
func (l loader) checkComplete(f treeFile, last byte, listNoKind bool, cov *coverage) error {
	switch {
	case cov.forms.volumeCut == "" || !f.inLayout:
	case last != '\n':
		return errors.New("it ends inside a line, where oc adm inspect ends every file with one")
	case listNoKind:
		return errors.New("its List ends before its kind, which oc adm inspect writes after the items")
	}
	return nil
}

// cutShort takes err, which file f gave, as the cut of a gather stopped
// at the volume limit: the file's kind is not captured and the rest is
// read. It returns false for any other must-gather, or a file outside its
// layout, whose error stands.
func (l loader) cutShort(f treeFile, err error, cov *coverage) bool {
	if cov.forms.volumeCut == "" || !f.inLayout || f.role != roleObjects {
		return false
	}
	cov.forms.lose(scope{f.gk, f.namespace}, fmt.Sprintf("%s was cut when the gather was stopped at the volume limit (%s): %v", f.name, cov.forms.volumeCut, err))
	l.logger.Warn("a must-gather file was cut when the gather was stopped; its kind reads as not captured", "file", f.name, "err", err)
	return true
}

// lastByte remembers the last byte read through it.
type lastByte struct {
	r    io.Reader
	last byte
}

func (b *lastByte) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.last = p[n-1]
	}
	return n, err
}
