package codexappserver

import (
	"embed"
	"strings"
)

// The app-server protocols AKK checked: one file per Codex version, the
// parts of `codex app-server generate-json-schema` AKK uses, compared with
// what that version prints (TestProtocolPinnedPerVersion). A daemon of
// another version is driven as its neighbours are, with a warning on its
// rows.
//
//go:embed testdata/protocol/*.json
var pinned embed.FS

// Checked reports whether AKK checked the app-server protocol of this
// Codex version.
func Checked(version string) bool {
	if version == "" {
		return false
	}
	_, err := pinned.Open("testdata/protocol/codex@" + version + ".json")
	return err == nil
}

// CheckedVersions lists the versions Checked accepts.
func CheckedVersions() []string {
	entries, _ := pinned.ReadDir("testdata/protocol")
	var out []string
	for _, e := range entries {
		v := strings.TrimSuffix(strings.TrimPrefix(e.Name(), "codex@"), ".json")
		out = append(out, v)
	}
	return out
}

// uncheckedWarning is the warning on a row of a daemon AKK has not checked.
func uncheckedWarning(version string) string {
	if version == "" {
		version = "of an unknown version"
	}
	return "Codex " + version + "'s app-server protocol is not one AKK checked (" + strings.Join(CheckedVersions(), ", ") +
		"); it is driven as those are, and what it answers is checked message by message"
}
