// Command releasecheck checks the build matrix of .goreleaser.yml against
// the Go toolchain and the Terraform Registry, without goreleaser:
//
//	go run ./tools/releasecheck          every target is one Go can build,
//	                                     and every platform the Registry
//	                                     serves providers for is built
//	go run ./tools/releasecheck -build   and cross-compiles every target the
//	                                     way goreleaser does (CGO off,
//	                                     -trimpath), printing a table
//
// `make release-check` runs the second form.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	flag.Parse()
	if err := run(*config, *build); err != nil {
		fmt.Fprintln(os.Stderr, "releasecheck:", err)
		os.Exit(1)
	}
}

func run(config string, build bool) error {
	targets, err := matrix(config)
	if err != nil {
		return err
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
	fmt.Printf("%d targets in %s, all buildable by %s, covering the Registry's %d platforms\n", len(targets), config, goVersion(), len(registryPlatforms))
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
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
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
