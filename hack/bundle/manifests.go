package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The image entry of deploy/base/kustomization.yaml: the Deployment names
// its image ImageName, and the kustomization maps it to a placeholder
// until an install sets the real one.
const (
	ImageName        = "ocl-exporter"
	baseKustomize    = "deploy/base/kustomization.yaml"
	placeholderImage = "registry.example.com/ocl_exporter"
	placeholderTag   = "set-me"
)

// imageRef is REPOSITORY[:TAG][@sha256:HEX], the repository lower case
// with an optional registry host (and port).
var imageRef = regexp.MustCompile(`^([a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+)(?::([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@(sha256:[0-9a-f]{64}))?$`)

// SetImage is what `kustomize edit set image ocl-exporter=REF` writes:
// the base's image entry pointed at ref, which must name a tag or a digest
// (a bare repository would deploy whatever :latest is that day).
func SetImage(ref string) (types.Image, error) {
	m := imageRef.FindStringSubmatch(ref)
	switch {
	case m == nil:
		return types.Image{}, fmt.Errorf("image %q: want REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:DIGEST, e.g. quay.io/example/ocl_exporter:v0.1.0", ref)
	case m[2] == "" && m[3] == "":
		return types.Image{}, fmt.Errorf("image %q names no tag or digest: add :TAG (the tag you pushed with make push) or @sha256:DIGEST", ref)
	case m[1] == placeholderImage:
		return types.Image{}, fmt.Errorf("image %q is the bundle's placeholder: name the image you pushed", ref)
	}
	img := types.Image{Name: ImageName, NewName: m[1], NewTag: m[2], Digest: m[3]}
	if img.Digest != "" {
		img.NewTag = "" // kustomize ignores the tag beside a digest
	}
	return img, nil
}

// Manifests renders the kustomization dir (relative to root: deploy, or an
// overlay) as `oc apply -k` would apply it, with the exporter's image set
// to ref. With runbookBase set, deploy/base/generated/ is generated anew
// linking the runbooks there (a release's tag); else the committed files
// are used. The repository is not modified: kustomize reads a copy in
// memory.
func Manifests(root, dir, ref, runbookBase string) ([]byte, error) {
	img, err := SetImage(ref)
	if err != nil {
		return nil, err
	}
	mem := filesys.MakeFsInMemory()
	if err := copyTree(mem, root, "deploy"); err != nil {
		return nil, err
	}
	if runbookBase != "" {
		files, err := GenerateWith(root, runbookBase)
		if err != nil {
			return nil, err
		}
		if err := mem.RemoveAll("/" + GeneratedDir); err != nil {
			return nil, err
		}
		for name, b := range files {
			if err := mem.WriteFile(path.Join("/", GeneratedDir, name), b); err != nil {
				return nil, err
			}
		}
	}
	if err := setBaseImage(mem, img); err != nil {
		return nil, err
	}
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, path.Join("/", filepath.ToSlash(dir)))
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	out, err := rm.AsYaml()
	if err != nil {
		return nil, err
	}
	if bytes.Contains(out, []byte(placeholderImage)) || bytes.Contains(out, []byte(":"+placeholderTag)) {
		return nil, fmt.Errorf("kustomize build %s: the placeholder image %s:%s is still in the output: does %s still map the image %q?",
			dir, placeholderImage, placeholderTag, baseKustomize, ImageName)
	}
	return out, nil
}

// copyTree copies root/dir's regular files, Go sources aside, into mem at
// /dir.
func copyTree(mem filesys.FileSystem, root, dir string) error {
	return fs.WalkDir(os.DirFS(root), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		return mem.WriteFile("/"+p, b)
	})
}

// setBaseImage replaces the image entry of the base kustomization in mem.
func setBaseImage(mem filesys.FileSystem, img types.Image) error {
	name := "/" + baseKustomize
	b, err := mem.ReadFile(name)
	if err != nil {
		return err
	}
	var k types.Kustomization
	if err := yaml.UnmarshalStrict(b, &k); err != nil {
		return fmt.Errorf("%s: %w", baseKustomize, err)
	}
	found := false
	for i := range k.Images {
		if k.Images[i].Name == img.Name {
			k.Images[i], found = img, true
		}
	}
	if !found {
		return errors.New(baseKustomize + ": no images entry named " + img.Name + " to set")
	}
	if b, err = yaml.Marshal(k); err != nil {
		return err
	}
	return mem.WriteFile(name, b)
}
