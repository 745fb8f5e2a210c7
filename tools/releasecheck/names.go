package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// What the Terraform Registry (and a private registry in HCP Terraform)
// reads from a release, for version V of terraform-provider-mesh:
//
//	terraform-provider-mesh_V_<os>_<arch>.zip  one per platform, holding
//	    terraform-provider-mesh_vV              the binary
//	terraform-provider-mesh_V_SHA256SUMS       the zips' and the manifest's sums
//	terraform-provider-mesh_V_SHA256SUMS.sig   its detached GPG signature
//	terraform-provider-mesh_V_manifest.json    the plugin protocol (6.0)
//
// goreleaser names them from the templates below; releaseNames checks that
// .goreleaser.yml still uses them.
const projectName = "terraform-provider-mesh"

var wantTemplates = map[string]string{
	"binary":              "{{ .ProjectName }}_v{{ .Version }}",
	"archive":             "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}",
	"checksum":            "{{ .ProjectName }}_{{ .Version }}_SHA256SUMS",
	"manifest":            "{{ .ProjectName }}_{{ .Version }}_manifest.json",
	"manifest file":       "terraform-registry-manifest.json",
	"ldflags":             "-X main.version={{ .Version }}",
	"signed artifacts":    "checksum",
	"signature (default)": "${artifact}.sig",
}

type releaseConfig struct {
	ProjectName string `json:"project_name"`
	Builds      []struct {
		Binary  string   `json:"binary"`
		Ldflags []string `json:"ldflags"`
	} `json:"builds"`
	Archives []struct {
		Formats      []string `json:"formats"`
		NameTemplate string   `json:"name_template"`
	} `json:"archives"`
	Checksum struct {
		NameTemplate string      `json:"name_template"`
		Algorithm    string      `json:"algorithm"`
		ExtraFiles   []extraFile `json:"extra_files"`
	} `json:"checksum"`
	Signs []struct {
		Artifacts string `json:"artifacts"`
		Signature string `json:"signature"`
	} `json:"signs"`
	Release struct {
		ExtraFiles []extraFile `json:"extra_files"`
	} `json:"release"`
}

type extraFile struct {
	Glob         string `json:"glob"`
	NameTemplate string `json:"name_template"`
}

// releaseNames lists what in the goreleaser configuration (config) and the
// registry manifest (manifest) would give the Registry a release it cannot
// read; empty when nothing.
func releaseNames(config, manifest []byte) []string {
	var c releaseConfig
	if err := yaml.Unmarshal(config, &c); err != nil {
		return []string{err.Error()}
	}
	var p []string
	want := func(what, got, want string) {
		if got != want {
			p = append(p, fmt.Sprintf("%s is %q, want %q", what, got, want))
		}
	}
	want("project_name", c.ProjectName, projectName)
	if len(c.Builds) == 0 || len(c.Archives) == 0 || len(c.Signs) == 0 {
		p = append(p, fmt.Sprintf("want builds, archives and signs; found %d, %d and %d", len(c.Builds), len(c.Archives), len(c.Signs)))
	}
	for i, b := range c.Builds {
		want(fmt.Sprintf("builds[%d].binary", i), b.Binary, wantTemplates["binary"])
		if !slices.ContainsFunc(b.Ldflags, func(f string) bool { return strings.Contains(f, wantTemplates["ldflags"]) }) {
			p = append(p, fmt.Sprintf("builds[%d].ldflags %q do not stamp the version (%s)", i, b.Ldflags, wantTemplates["ldflags"]))
		}
	}
	for i, a := range c.Archives {
		if !slices.Equal(a.Formats, []string{"zip"}) {
			p = append(p, fmt.Sprintf("archives[%d].formats is %q, want [zip]", i, a.Formats))
		}
		want(fmt.Sprintf("archives[%d].name_template", i), a.NameTemplate, wantTemplates["archive"])
	}
	want("checksum.name_template", c.Checksum.NameTemplate, wantTemplates["checksum"])
	want("checksum.algorithm", c.Checksum.Algorithm, "sha256")
	manifestIn := func(what string, files []extraFile) {
		if !slices.Contains(files, extraFile{Glob: wantTemplates["manifest file"], NameTemplate: wantTemplates["manifest"]}) {
			p = append(p, fmt.Sprintf("%s does not carry %s as %s", what, wantTemplates["manifest file"], wantTemplates["manifest"]))
		}
	}
	manifestIn("checksum.extra_files (the SHA256SUMS)", c.Checksum.ExtraFiles)
	manifestIn("release.extra_files", c.Release.ExtraFiles)
	for i, s := range c.Signs {
		want(fmt.Sprintf("signs[%d].artifacts", i), s.Artifacts, wantTemplates["signed artifacts"])
		if s.Signature != "" {
			want(fmt.Sprintf("signs[%d].signature", i), s.Signature, wantTemplates["signature (default)"])
		}
	}

	var m struct {
		Version  int `json:"version"`
		Metadata struct {
			ProtocolVersions []string `json:"protocol_versions"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		return append(p, fmt.Sprintf("%s: %v", wantTemplates["manifest file"], err))
	}
	if m.Version != 1 || !slices.Equal(m.Metadata.ProtocolVersions, []string{"6.0"}) {
		p = append(p, fmt.Sprintf("%s has version %d and protocol_versions %q; the provider serves plugin protocol 6: want version 1 and [\"6.0\"]",
			wantTemplates["manifest file"], m.Version, m.Metadata.ProtocolVersions))
	}
	return p
}
