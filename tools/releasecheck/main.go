// Command releasecheck checks what a release is made of, without
// goreleaser:
//
//	go run ./tools/releasecheck          every target of .goreleaser.yml is
//	                                     one Go can build, every platform the
//	                                     Registry serves providers for is
//	                                     built, the files are named as the
//	                                     Registry reads them (names.go), and
//	                                     the GNUmakefile's VERSION is the top
//	                                     section of CHANGELOG.md (version.go)
//	go run ./tools/releasecheck -build   and that section is dated, and every
//	                                     target cross-compiles the way
//	                                     goreleaser builds it (CGO off,
//	                                     -trimpath, the version stamped),
//	                                     printing a table; the binary for this
//	                                     machine must report the version
//	-tag v0.1.0                          and the release tag names the version
//
// `make tidy-check` (in make test) runs the first form, `make release-check`
// the second, the release workflow the first with -tag.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// registryPlatforms are the platforms the Terraform Registry serves
// provider binaries for, and terraform init asks for.
var registryPlatforms = []string{
	"darwin/amd64", "darwin/arm64",
	"freebsd/386", "freebsd/amd64", "freebsd/arm", "freebsd/arm64",
	"linux/386", "linux/amd64", "linux/arm", "linux/arm64",
	"windows/386", "windows/amd64", "windows/arm64",
}

type goreleaser struct {
	Builds []struct {
		Goos   []string `json:"goos"`
		Goarch []string `json:"goarch"`
		Ignore []struct {
			Goos   string `json:"goos"`
			Goarch string `json:"goarch"`
		} `json:"ignore"`
	} `json:"builds"`
}

func main() {
	build := flag.Bool("build", false, "cross-compile every target")
	config := flag.String("config", ".goreleaser.yml", "goreleaser configuration")
	tag := flag.String("tag", "", "the release tag, which must be v<version>")
	flag.Parse()
	if err := run(*config, *build, *tag); err != nil {
		fmt.Fprintln(os.Stderr, "releasecheck:", err)
		os.Exit(1)
	}
}

func run(config string, build bool, tag string) error {
	targets, err := matrix(config)
	if err != nil {
		return err
	}
	var files [4][]byte
	for i, name := range []string{"GNUmakefile", "CHANGELOG.md", config, "terraform-registry-manifest.json"} {
		if files[i], err = os.ReadFile(name); err != nil {
			return err
		}
	}
	version, err := checkVersion(string(files[0]), string(files[1]), build || tag != "", tag)
	if err != nil {
		return err
	}
	if p := releaseNames(files[2], files[3]); len(p) > 0 {
		return fmt.Errorf("the release would not be what the Terraform Registry reads:\n  %s", strings.Join(p, "\n  "))
	}
	out, err := exec.Command("go", "tool", "dist", "list").Output()
	if err != nil {
		return fmt.Errorf("go tool dist list: %w", err)
	}
	supported := strings.Fields(string(out))
	var problems []string
	for _, t := range targets {
		if !slices.Contains(supported, t) {
			problems = append(problems, fmt.Sprintf("%s is in %s, but this Go (%s) cannot build it: add it to ignore", t, config, goVersion()))
		}
	}
	for _, p := range registryPlatforms {
		if !slices.Contains(targets, p) {
			problems = append(problems, fmt.Sprintf("%s is a Terraform Registry platform, but %s does not build it", p, config))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problem(s):\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	fmt.Printf("version %s (GNUmakefile, CHANGELOG.md); %d targets in %s, all buildable by %s, covering the Registry's %d platforms, named as the Registry reads them\n",
		version, len(targets), config, goVersion(), len(registryPlatforms))
	if !build {
		return nil
	}
	dir, err := os.MkdirTemp("", "releasecheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Printf("%-16s %8s %8s\n", "target", "MB", "seconds")
	for _, t := range targets {
		goos, goarch, _ := strings.Cut(t, "/")
		bin := filepath.Join(dir, strings.ReplaceAll(t, "/", "_"))
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+version, "-o", bin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
		cmd.Stderr = os.Stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building %s: %w", t, err)
		}
		fi, err := os.Stat(bin)
		if err != nil {
			return err
		}
		fmt.Printf("%-16s %8.1f %8.1f\n", t, float64(fi.Size())/1e6, time.Since(start).Seconds())
		if t == runtime.GOOS+"/"+runtime.GOARCH {
			out, err := exec.Command(bin, "-version").Output()
			if want := "terraform-provider-mesh " + version; err != nil || strings.TrimSpace(string(out)) != want {
				return fmt.Errorf("the %s build says %q (%v) to -version, want %q", t, strings.TrimSpace(string(out)), err, want)
			}
		}
		os.Remove(bin)
	}
	fmt.Printf("all %d targets built\n", len(targets))
	return nil
}

// matrix expands the goos x goarch of every build, less its ignores.
func matrix(config string) ([]string, error) {
	raw, err := os.ReadFile(config)
	if err != nil {
		return nil, err
	}
	var g goreleaser
	if err := yaml.Unmarshal(raw, &g); err != nil {
		return nil, fmt.Errorf("%s: %w", config, err)
	}
	if len(g.Builds) == 0 {
		return nil, fmt.Errorf("%s has no builds", config)
	}
	var targets []string
	for _, b := range g.Builds {
		for _, goos := range b.Goos {
			for _, goarch := range b.Goarch {
				ignored := slices.ContainsFunc(b.Ignore, func(i struct {
					Goos   string `json:"goos"`
					Goarch string `json:"goarch"`
				}) bool {
					return (i.Goos == "" || i.Goos == goos) && (i.Goarch == "" || i.Goarch == goarch)
				})
				if t := goos + "/" + goarch; !ignored && !slices.Contains(targets, t) {
					targets = append(targets, t)
				}
			}
		}
	}
	slices.Sort(targets)
	return targets, nil
}

func goVersion() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "go"
	}
	return strings.TrimSpace(string(out))
}
