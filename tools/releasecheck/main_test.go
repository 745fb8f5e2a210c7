package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readRepo reads a file of the repository, or the mutated copy tools/mutate
// names in MUTATE_FILE.
func readRepo(t *testing.T, name string) []byte {
	t.Helper()
	path := filepath.Join("..", "..", name)
	if file, mutated, ok := strings.Cut(os.Getenv("MUTATE_FILE"), "="); ok && file == name {
		path = mutated
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The repository as it is: the GNUmakefile builds the version of the top,
// dated section of CHANGELOG.md, as a release needs.
func TestRepositoryVersionAgrees(t *testing.T) {
	v, err := checkVersion(string(readRepo(t, "GNUmakefile")), string(readRepo(t, "CHANGELOG.md")), true, "")
	if err != nil {
		t.Fatal(err)
	}
	if !semver.MatchString(v) {
		t.Fatalf("version %q", v)
	}
}

func TestCheckVersion(t *testing.T) {
	const mk = "GO ?= go\nVERSION := 0.1.0\nLDFLAGS := -X main.version=$(VERSION)\n"
	const dated = "# Changelog\n\n## 0.1.0 (2026-11-26)\n\nFEATURES:\n\n## 0.0.9 (2026-01-02)\n"
	for _, c := range []struct {
		name, makefile, changelog, tag string
		release                        bool
		wantErr                        string // "" when it must pass
	}{
		{name: "agree, dated", makefile: mk, changelog: dated},
		{name: "agree, dated, release, tag", makefile: mk, changelog: dated, release: true, tag: "v0.1.0"},
		{name: "agree, unreleased", makefile: mk, changelog: "## 0.1.0 (Unreleased)\n"},
		{name: "VERSION with =", makefile: "VERSION = 0.1.0\n", changelog: dated},
		{name: "unreleased at release", makefile: mk, changelog: "## 0.1.0 (Unreleased)\n", release: true, wantErr: "Unreleased; a release needs its date"},
		{name: "changelog ahead", makefile: mk, changelog: "## 0.2.0 (2026-12-01)\n## 0.1.0 (2026-11-26)\n", wantErr: "builds version 0.1.0, but the top section of CHANGELOG.md is 0.2.0"},
		{name: "makefile ahead", makefile: "VERSION := 0.1.1\n", changelog: dated, wantErr: "builds version 0.1.1, but the top section of CHANGELOG.md is 0.1.0"},
		{name: "date in words", makefile: mk, changelog: "## 0.1.0 (November 26, 2026)\n", wantErr: "write it as YYYY-MM-DD"},
		{name: "no such day", makefile: mk, changelog: "## 0.1.0 (2026-11-31)\n", wantErr: "write it as YYYY-MM-DD"},
		{name: "day first", makefile: mk, changelog: "## 0.1.0 (26-11-2026)\n", wantErr: "write it as YYYY-MM-DD"},
		{name: "no date", makefile: mk, changelog: "## 0.1.0\n", wantErr: "is not \"## x.y.z (YYYY-MM-DD)\""},
		{name: "v prefix", makefile: mk, changelog: "## v0.1.0 (2026-11-26)\n", wantErr: "names no semantic version"},
		{name: "no section", makefile: mk, changelog: "# Changelog\n", wantErr: "has no"},
		{name: "no VERSION", makefile: "GO ?= go\n", changelog: dated, wantErr: "0 VERSION lines"},
		{name: "two VERSIONs", makefile: mk + "VERSION := 0.2.0\n", changelog: dated, wantErr: "2 VERSION lines"},
		{name: "VERSION not semver", makefile: "VERSION := latest\n", changelog: dated, wantErr: "not a semantic version"},
		{name: "tag of another version", makefile: mk, changelog: dated, release: true, tag: "v0.1.1", wantErr: "the tag v0.1.1 does not name version 0.1.0"},
		{name: "tag without v", makefile: mk, changelog: dated, release: true, tag: "0.1.0", wantErr: "tag v0.1.0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := checkVersion(c.makefile, c.changelog, c.release, c.tag)
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("want no error, got %v", err)
			case c.wantErr != "" && err == nil:
				t.Fatalf("want an error containing %q, got none", c.wantErr)
			case c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr):
				t.Fatalf("want an error containing %q, got %v", c.wantErr, err)
			}
		})
	}
}

// The repository's goreleaser configuration names every file as the
// Registry reads it, and each way of breaking a name is reported.
func TestReleaseNames(t *testing.T) {
	config, manifest := string(readRepo(t, ".goreleaser.yml")), string(readRepo(t, "terraform-registry-manifest.json"))
	if p := releaseNames([]byte(config), []byte(manifest)); len(p) > 0 {
		t.Fatalf("the repository's release configuration: %q", p)
	}
	for _, c := range []struct {
		name, from, to string
		inManifest     bool
		want           string
	}{
		{name: "project name from the directory", from: "project_name: terraform-provider-mesh\n", to: "", want: "project_name"},
		{name: "binary without v", from: `binary: "{{ .ProjectName }}_v{{ .Version }}"`, to: `binary: "{{ .ProjectName }}_{{ .Version }}"`, want: "builds[0].binary"},
		{name: "version not stamped", from: " -X main.version={{ .Version }}", to: "", want: "do not stamp the version"},
		{name: "tar.gz", from: "formats: [zip]", to: "formats: [tar.gz]", want: "archives[0].formats"},
		{name: "archive with dashes", from: `name_template: "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}"`, to: `name_template: "{{ .ProjectName }}-{{ .Version }}-{{ .Os }}-{{ .Arch }}"`, want: "archives[0].name_template"},
		{name: "checksums named SHASUMS", from: `name_template: "{{ .ProjectName }}_{{ .Version }}_SHA256SUMS"`, to: `name_template: "{{ .ProjectName }}_{{ .Version }}_SHASUMS"`, want: "checksum.name_template"},
		{name: "manifest not summed", from: "checksum:\n  extra_files:\n", to: "checksum:\n  extra_filez:\n", want: "checksum.extra_files"},
		{name: "binaries signed", from: "artifacts: checksum", to: "artifacts: binary", want: "signs[0].artifacts"},
		{name: "signature renamed", from: "  - artifacts: checksum\n", to: "  - artifacts: checksum\n    signature: \"${artifact}.asc\"\n", want: "signs[0].signature"},
		{name: "protocol 5", from: `"6.0"`, to: `"5.0"`, inManifest: true, want: "plugin protocol 6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, man := config, manifest
			target := &cfg
			if c.inManifest {
				target = &man
			}
			if strings.Count(*target, c.from) != 1 {
				t.Fatalf("%q is not in the file exactly once; update the case", c.from)
			}
			*target = strings.Replace(*target, c.from, c.to, 1)
			p := releaseNames([]byte(cfg), []byte(man))
			if !strings.Contains(strings.Join(p, "\n"), c.want) {
				t.Fatalf("want a problem naming %q, got %q", c.want, p)
			}
		})
	}
}
