package main

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// One version, three places: the GNUmakefile's VERSION (stamped into what
// make build and make install produce), the top section of CHANGELOG.md,
// and, for a release, the git tag goreleaser takes {{ .Version }} from.

var (
	makefileVersionLine = regexp.MustCompile(`(?m)^VERSION[ \t]*:?=[ \t]*(\S+)[ \t]*$`)
	changelogHeading    = regexp.MustCompile(`^## (\S+) \(([^)]*)\)$`)
	semver              = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`)
)

// unreleased is the date of a top section still being written.
const unreleased = "Unreleased"

// makefileVersion is the value of the GNUmakefile's single VERSION line.
func makefileVersion(makefile string) (string, error) {
	m := makefileVersionLine.FindAllStringSubmatch(makefile, -1)
	if len(m) != 1 {
		return "", fmt.Errorf("GNUmakefile has %d VERSION lines, want exactly one (VERSION := x.y.z)", len(m))
	}
	if !semver.MatchString(m[0][1]) {
		return "", fmt.Errorf("GNUmakefile: VERSION %q is not a semantic version (x.y.z)", m[0][1])
	}
	return m[0][1], nil
}

// changelogTop is the version and date of the first "## " section of the
// changelog; the date is YYYY-MM-DD, or Unreleased.
func changelogTop(changelog string) (version, date string, err error) {
	for _, line := range strings.Split(changelog, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if !strings.HasPrefix(line, "## ") {
			continue
		}
		m := changelogHeading.FindStringSubmatch(line)
		if m == nil {
			return "", "", fmt.Errorf("CHANGELOG.md: the top section %q is not \"## x.y.z (YYYY-MM-DD)\" or \"## x.y.z (Unreleased)\"", line)
		}
		version, date = m[1], m[2]
		if !semver.MatchString(version) {
			return "", "", fmt.Errorf("CHANGELOG.md: the top section %q names no semantic version (x.y.z)", line)
		}
		if date != unreleased {
			if _, err := time.Parse(time.DateOnly, date); err != nil {
				return "", "", fmt.Errorf("CHANGELOG.md: the top section %q has the date %q; write it as YYYY-MM-DD (or Unreleased until the release)", line, date)
			}
		}
		return version, date, nil
	}
	return "", "", fmt.Errorf("CHANGELOG.md has no \"## x.y.z (YYYY-MM-DD)\" section")
}

// checkVersion says whether the GNUmakefile and the changelog name one
// version. For a release (release true) the changelog's top section must
// be dated, and tag, when given, must be v<version>.
func checkVersion(makefile, changelog string, release bool, tag string) (string, error) {
	want, err := makefileVersion(makefile)
	if err != nil {
		return "", err
	}
	got, date, err := changelogTop(changelog)
	if err != nil {
		return "", err
	}
	if got != want {
		return "", fmt.Errorf("the GNUmakefile builds version %s, but the top section of CHANGELOG.md is %s: set VERSION := %s in the GNUmakefile, or open a \"## %s (Unreleased)\" section", want, got, got, want)
	}
	if release && date == unreleased {
		return "", fmt.Errorf("CHANGELOG.md: the section of %s is Unreleased; a release needs its date, \"## %s (YYYY-MM-DD)\"", want, want)
	}
	if tag != "" && tag != "v"+want {
		return "", fmt.Errorf("the tag %s does not name version %s of the GNUmakefile and CHANGELOG.md; tag v%s", tag, want, want)
	}
	return want, nil
}
