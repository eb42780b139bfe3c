package sourcetest

// The forms a must-gather reaches support in, besides the tree the gather
// wrote: logs read over an untrusted kubelet, a gather stopped at the
// volume limit, a must-gather cleaned by must-gather-clean, one archived
// or extracted on macOS. Each is what the tool named does to the tree.

import (
	"archive/tar"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// logFiles are the files inspect writes for one container's log
// (openshift/oc pkg/cli/admin/inspect/pod.go gatherContainerLogs): the
// log in current.log and an empty previous.log (created before the
// request for a previous run fails). Where the kubelet's serving
// certificate is not trusted the first request fails and inspect retries
// with InsecureSkipTLSVerifyBackend into current.insecure.log (and
// previous.insecure.log), leaving the first attempt's file empty
// (writer.go simpleFileWriter.Write creates it before the stream fails).
func (o MustGatherOptions) logFiles(log string) map[string]string {
	if o.InsecureLogs {
		return map[string]string{"current.log": "", "current.insecure.log": log, "previous.log": "", "previous.insecure.log": ""}
	}
	return map[string]string{"current.log": log, "previous.log": ""}
}

// VolumeCut is a gather `oc adm must-gather --volume-percentage` stopped:
// its disk usage checker SIGKILLs the gather in the middle of whatever it
// writes (openshift/oc pkg/cli/admin/mustgather/mustgather.go
// volumeUsageCheckerScript, release-4.20 ... 5.0: every session of the
// gather container killed), then copies what was written
// (copyFilesFromPod), the gather container's log included as gather.logs.
type VolumeCut struct {
	// File is cut right after the Occurrence-th CutAfter in it (paths
	// from the image's directory).
	File       string
	CutAfter   string
	Occurrence int
	// Missing are the paths the gather had not written yet.
	Missing []string
}

// Apply cuts the must-gather at root as the checker does.
func (c VolumeCut) Apply(root string, at time.Time) error {
	image := filepath.Join(root, path.Base(mustGatherImageDir))
	cut := filepath.Join(image, filepath.FromSlash(c.File))
	b, err := os.ReadFile(cut)
	if err != nil {
		return err
	}
	if err := os.WriteFile(cut, cutAfter(b, c.CutAfter, c.Occurrence), 0o644); err != nil {
		return err
	}
	for _, m := range c.Missing {
		if err := os.RemoveAll(filepath.Join(image, filepath.FromSlash(m))); err != nil {
			return err
		}
	}
	stamp := func(d time.Duration) string { return at.Add(d).UTC().Format("2006-01-02T15:04:05.000000000Z") }
	log := stamp(-190*time.Second) + " [disk usage checker] Started\n" +
		stamp(-185*time.Second) + " [disk usage checker] Volume usage percentage: current = 3 ; allowed = 30\n" +
		stamp(-180*time.Second) + " Gathering data for ns/openshift-machine-config-operator...\n" +
		stamp(-10*time.Second) + " [disk usage checker] Volume usage percentage: current = 31 ; allowed = 30\n" +
		stamp(-10*time.Second) + " [disk usage checker] Disk usage exceeds the volume percentage of 30 for mounted directory, terminating...\n"
	return os.WriteFile(filepath.Join(image, "gather.logs"), []byte(log), 0o644)
}

// ipv4 is must-gather-clean's IPv4 pattern (pkg/obfuscator/ip.go ipv4re):
// dotted, dashed or underscored, as in node names "ip-10-0-17-233".
var ipv4 = regexp.MustCompile(`(([1-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])[.]([0-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])[.]([0-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])[.]|([1-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])[_-]([0-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])[_-]([0-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])[_-])([0-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5]){1,3}`)

// cleanOmits are the kinds openshift/must-gather-clean's default
// configuration omits (examples/openshift_default.yaml): a file is removed
// whole when any object it holds is one (pkg/omitter
// kubernetesresource.go OmitKubeResource; an empty List is kept).
var cleanOmits = []struct{ kind, apiVersion string }{
	{"Secret", ""}, {"ConfigMap", ""}, {"CertificateSigningRequest", "certificates.k8s.io/v1"},
	{"CertificateSigningRequestList", "certificates.k8s.io/v1"}, {"MachineConfig", "machineconfiguration.openshift.io/v1"},
}

// Clean writes the must-gather at root as `must-gather-clean -c
// openshift_default.yaml -i <root> -o <out> -r <out>` does (pkg/cli
// cli.go Run): each file of an omitted kind left out, every IPv4 address
// in paths and contents replaced by x-ipv4-<n>-x, numbered in the order
// met (pkg/obfuscator ip.go, consistent replacement), watermark.txt in the
// output (pkg/watermarker) and, with report, report.yaml listing the
// omissions and the configuration (pkg/reporting). It returns out.
func Clean(root, out string, report bool, at time.Time) (string, error) {
	var omitted []string
	seen := map[string]string{}
	obfuscate := func(s string) string {
		return ipv4.ReplaceAllStringFunc(s, func(m string) string {
			if _, ok := seen[m]; !ok {
				seen[m] = fmt.Sprintf("x-ipv4-%010d-x", len(seen)+1)
			}
			return seen[m]
		})
	}
	var names []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	for _, p := range names {
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		if omitFile(rel, b) {
			omitted = append(omitted, filepath.ToSlash(filepath.Join(filepath.Base(root), rel)))
			continue
		}
		dst := filepath.Join(out, obfuscate(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(dst, []byte(obfuscate(string(b))), 0o644); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(out, "watermark.txt"), []byte(at.UTC().String()+"\nv0.0.3\n"), 0o644); err != nil {
		return "", err
	}
	if report {
		if err := writeCleanReport(filepath.Join(out, "report.yaml"), omitted); err != nil {
			return "", err
		}
	}
	return out, os.RemoveAll(root)
}

// omitFile applies the default omit rules to one file as must-gather-clean
// reads it (pkg/kube kube_schema_reader.go ReadKubernetesResourceFromPath:
// .yaml or .json with a kind and an apiVersion; a v1 "...List" read as its
// items).
func omitFile(name string, b []byte) bool {
	if !slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(name)) {
		return false
	}
	var res struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Items      []struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		} `json:"items"`
	}
	if yaml.Unmarshal(b, &res) != nil || res.Kind == "" || res.APIVersion == "" {
		return false
	}
	items := res.Items
	if !strings.HasSuffix(res.Kind, "List") || res.APIVersion != "v1" {
		items = items[:0]
		items = append(items, struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}{res.APIVersion, res.Kind})
	}
	for _, it := range items {
		for _, o := range cleanOmits {
			if it.Kind == o.kind && (o.apiVersion == "" || it.APIVersion == o.apiVersion) {
				return true
			}
		}
	}
	return false
}

func writeCleanReport(p string, omitted []string) error {
	var b strings.Builder
	b.WriteString("omissions:\n")
	for _, o := range omitted {
		fmt.Fprintf(&b, "    - %s\n", o)
	}
	b.WriteString("config:\n    obfuscate:\n        - replacementType: Consistent\n          target: All\n          type: IP\n    omit:\n")
	for _, o := range cleanOmits {
		fmt.Fprintf(&b, "        - kubernetesResource:\n")
		if o.apiVersion != "" {
			fmt.Fprintf(&b, "            apiVersion: %s\n", o.apiVersion)
		}
		fmt.Fprintf(&b, "            kind: %s\n          type: Kubernetes\n", o.kind)
	}
	b.WriteString("    randSeed: 1\n")
	return os.WriteFile(p, []byte(b.String()), 0o644)
}

// macXattrs are the extended attributes macOS sets on a must-gather
// downloaded with a browser and extracted with Archive Utility: the
// quarantine of the download, and since macOS 13 the provenance of the
// app that wrote the files.
var macXattrs = []struct {
	name  string
	value []byte
}{
	{"com.apple.provenance", []byte{0x01, 0x02, 0x00, 0x5c, 0x3f, 0x81, 0x2e, 0x0a, 0x7d, 0x44, 0x19}},
	{"com.apple.quarantine", []byte("0083;6711f2a4;Safari;8C3F9A0E-5B1D-4E27-9A6C-3D2F1B0E7A45")},
}

// appleDouble is the AppleDouble blob copyfile(3) packs for a file with
// macXattrs (COPYFILE_PACK, as libarchive's setup_mac_metadata asks):
// the header and two entries, Finder Info (id 9) holding its 32 bytes
// and Apple's "ATTR" block of extended attributes, and an empty resource
// fork (id 2), laid out as the `._file3` macOS wrote in libarchive's
// test_write_disk_mac_metadata.tar.gz.
func appleDouble() []byte {
	const finderInfo = 0x32      // after the 26-byte header and two 12-byte entries
	attrs := finderInfo + 32 + 2 // Finder Info, then 2 bytes to align the ATTR header
	entries := attrs + 36
	start := entries
	for _, x := range macXattrs {
		start += (11 + len(x.name) + 1 + 3) &^ 3
	}
	total := start
	for _, x := range macXattrs {
		total += len(x.value)
	}
	b := make([]byte, total)
	be := binary.BigEndian
	be.PutUint32(b[0:], 0x00051607)
	be.PutUint32(b[4:], 0x00020000)
	copy(b[8:], "Mac OS X        ")
	be.PutUint16(b[24:], 2)
	be.PutUint32(b[26:], 9)
	be.PutUint32(b[30:], finderInfo)
	be.PutUint32(b[34:], uint32(total-finderInfo))
	be.PutUint32(b[38:], 2)
	be.PutUint32(b[42:], uint32(total))
	copy(b[attrs:], "ATTR")
	be.PutUint32(b[attrs+8:], uint32(total))
	be.PutUint32(b[attrs+12:], uint32(start))
	be.PutUint32(b[attrs+16:], uint32(total-start))
	be.PutUint16(b[attrs+34:], uint16(len(macXattrs)))
	at, data := entries, start
	for _, x := range macXattrs {
		be.PutUint32(b[at:], uint32(data))
		be.PutUint32(b[at+4:], uint32(len(x.value)))
		b[at+10] = byte(len(x.name) + 1)
		copy(b[at+11:], x.name)
		copy(b[data:], x.value)
		at += (11 + len(x.name) + 1 + 3) &^ 3
		data += len(x.value)
	}
	return b
}

// dsStore is a Finder .DS_Store: its "Bud1" buddy allocator header and an
// empty tree.
var dsStore = append([]byte{0, 0, 0, 1, 'B', 'u', 'd', '1', 0, 0, 0x10, 0, 0, 0, 0x08, 0, 0, 0, 0x10, 0}, make([]byte, 44)...)

// MacOSExtracted adds to the tree at dir what a macOS archive of it
// leaves once extracted by a tar that does not read AppleDouble (GNU tar,
// libarchive off macOS): a "._<name>" file beside every file and
// directory, and the .DS_Store Finder wrote in the directories it showed.
func MacOSExtracted(dir string) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, p := range paths {
		if err := os.WriteFile(filepath.Join(filepath.Dir(p), "._"+filepath.Base(p)), appleDouble(), 0o644); err != nil {
			return err
		}
	}
	for _, p := range append([]string{dir}, paths[:min(len(paths), 2)]...) {
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			if err := os.WriteFile(filepath.Join(p, ".DS_Store"), dsStore, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteMacOSArchive archives the tree at dir into out as macOS's bsdtar
// (`tar czf out <dir>`) does: pax format, each entry with its extended
// attributes as LIBARCHIVE.xattr and SCHILY.xattr records, after an
// AppleDouble "._<name>" entry holding them (--mac-metadata, bsdtar's
// default in c mode: archive_write_set_format_pax.c
// archive_write_pax_header), directories included, and Finder's
// .DS_Store files. Times are fixed, so the archive is the same every run.
func WriteMacOSArchive(dir, out string) error {
	return writeTarGz(out, func(tw *tar.Writer) error {
		mtime := time.Date(2025, 10, 17, 13, 4, 0, 0, time.UTC)
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(filepath.Dir(dir), p)
			name := filepath.ToSlash(rel)
			if d.IsDir() {
				name += "/"
			}
			return writeMacEntry(tw, name, p, d.IsDir(), mtime)
		})
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.Base(dir) + "/.DS_Store", Mode: 0o644, Size: int64(len(dsStore)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX, Uname: "support", Gname: "staff", Uid: 501, Gid: 20}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(dsStore)
		return err
	})
}

// writeTarGz writes out as a gzipped tar of what write puts in it.
func writeTarGz(out string, write func(*tar.Writer) error) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	if err := write(tw); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// writeMacEntry writes the AppleDouble entry of name, then name itself.
func writeMacEntry(tw *tar.Writer, name, p string, dir bool, mtime time.Time) error {
	xattrs := map[string]string{}
	for _, x := range macXattrs {
		xattrs["LIBARCHIVE.xattr."+x.name] = base64.StdEncoding.EncodeToString(x.value)
		xattrs["SCHILY.xattr."+x.name] = string(x.value)
	}
	ad := appleDouble()
	parent, leaf := path.Split(strings.TrimSuffix(name, "/"))
	hd := &tar.Header{Name: parent + "._" + leaf, Mode: 0o644, Size: int64(len(ad)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX, Uname: "support", Gname: "staff", Uid: 501, Gid: 20}
	if err := tw.WriteHeader(hd); err != nil {
		return err
	}
	if _, err := tw.Write(ad); err != nil {
		return err
	}
	h := &tar.Header{Name: name, Mode: 0o644, ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX, PAXRecords: xattrs, Uname: "support", Gname: "staff", Uid: 501, Gid: 20}
	if dir {
		h.Mode, h.Typeflag = 0o755, tar.TypeDir
		return tw.WriteHeader(h)
	}
	src, err := os.Open(p)
	if err != nil {
		return err
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return err
	}
	h.Size = info.Size()
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err = io.Copy(tw, src)
	return err
}

// WriteTarGz archives the tree at dir into out as `tar czf out -C
// <parent> <dir's name>` does with GNU tar.
func WriteTarGz(dir, out string) error {
	return writeTarGz(out, func(tw *tar.Writer) error {
		return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(filepath.Dir(dir), p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
				return err
			}
			_, err = tw.Write(b)
			return err
		})
	})
}
